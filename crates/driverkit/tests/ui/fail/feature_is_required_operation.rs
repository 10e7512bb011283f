// A required operation is never a feature.
sandloom_driverkit::define_capability! {
    name: "kv",
    stability: Experimental,
    contract_version: (0, 1, 0),
    required_operations: ["get", "put"],
    features: ["get"],
}

fn main() {}
