//! A capability defined as before issue 27, without the native twin's name (`ops:`): the error
//! says what to add.



sandloom_driverkit::define_capability! {
    /// Translation.
    pub capability TranslateCapability {
        name: "translate",
        stability: Experimental,
        contract_version: (0, 1, 0),
        features: [],
        key: TRANSLATE,
        provider: TranslateProvider,
        gate: TranslateGate,
    }
    /// What modules call.
    pub trait Translate {
        /// `text` in the target language.
        async fn translate(&self, text: &str) -> sandloom_driverkit::sdk::InfraResult<String>;
    }
}

fn main() {}
