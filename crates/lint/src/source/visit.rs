//! The syn visitor that turns one parsed file into [`Facts`].

use std::path::Path;

use proc_macro2::Span;
use syn::visit::{self, Visit};
use syn::{Attribute, Fields, Item, Meta, UseTree};

use super::attrs::{
    TypePaths, include_arg, is_std_include, item_attrs, path_attr, serde_attrs, serde_rename,
    test_only, type_name,
};
use super::facts::{
    DriverImpl, ExternCrate, Facts, FieldDef, Import, Include, Loc, PathRoot, Symbol, TypeDef,
    UsedPath,
};
use super::tokens::{self, name};
use crate::config::DYNAMIC_LOADING_SYMBOLS;

/// A `mod name;` whose file the loader must find.
#[derive(Debug)]
pub(crate) struct ModDecl {
    pub(crate) name: String,
    pub(crate) path_attr: Option<String>,
    /// The inline modules (`mod a { … }`) around the declaration, with their `#[path]`.
    pub(crate) inline: Vec<(String, Option<String>)>,
    pub(crate) loc: Loc,
}

pub(crate) struct Visitor<'a> {
    file: &'a Path,
    base: Vec<String>,
    inline: Vec<(String, Option<String>)>,
    facts: &'a mut Facts,
    pub(crate) decls: Vec<ModDecl>,
    /// Set just before visiting the path of `<T>::x`: its first segment is no crate.
    skip_root: bool,
    /// The `use` item being read: `pub`, and written with a leading `::`.
    use_item: (bool, bool),
}

impl<'a> Visitor<'a> {
    pub(crate) fn new(file: &'a Path, module: Vec<String>, facts: &'a mut Facts) -> Self {
        facts.modules.insert(module.clone());
        Visitor {
            file,
            base: module,
            inline: Vec::new(),
            facts,
            decls: Vec::new(),
            skip_root: false,
            use_item: (false, false),
        }
    }

    fn loc(&self, span: Span) -> Loc {
        let start = span.start();
        Loc {
            file: self.file.to_path_buf(),
            line: start.line,
            column: start.column + 1,
        }
    }

    fn module(&self) -> Vec<String> {
        let mut module = self.base.clone();
        module.extend(self.inline.iter().map(|(n, _)| n.clone()));
        module
    }

    fn root(&mut self, ident: &proc_macro2::Ident) {
        let name = name(ident);
        if !matches!(name.as_str(), "crate" | "self" | "super" | "Self") {
            let loc = self.loc(ident.span());
            self.facts.roots.push(PathRoot { name, loc });
        }
    }

    /// A path written outside `use` items, its first segment at `root`.
    fn used_path(&mut self, root: &proc_macro2::Ident, segments: Vec<String>, absolute: bool) {
        let loc = self.loc(root.span());
        let module = self.module();
        self.facts.paths.push(UsedPath {
            segments,
            absolute,
            macro_call: false,
            module,
            loc,
        });
    }

    /// A one-segment path naming a type, a trait or a macro (`Driver`, `register_driver!`):
    /// it may come from a glob import. Values are left out: a local variable is no import.
    fn bare(&mut self, path: &syn::Path) {
        if path.leading_colon.is_none()
            && path.segments.len() == 1
            && let Some(only) = path.segments.first()
        {
            self.used_path(&only.ident, vec![name(&only.ident)], false);
        }
    }

    /// The paths in a macro body or an attribute's arguments.
    fn token_paths(&mut self, stream: proc_macro2::TokenStream) {
        let mut found = Vec::new();
        tokens::path_roots(stream, &mut found);
        for path in found {
            self.root(&path.root);
            self.used_path(&path.root, path.segments, path.absolute);
        }
    }

    /// Named items other than modules, for resolving paths into this crate from others.
    fn item_name(&mut self, item: &Item) {
        let ident = match item {
            Item::Const(i) => &i.ident,
            Item::Enum(i) => &i.ident,
            Item::Fn(i) => &i.sig.ident,
            Item::Static(i) => &i.ident,
            Item::Struct(i) => &i.ident,
            Item::Trait(i) => &i.ident,
            Item::TraitAlias(i) => &i.ident,
            Item::Type(i) => &i.ident,
            Item::Union(i) => &i.ident,
            Item::Macro(i) => match &i.ident {
                Some(ident) => ident,
                None => return,
            },
            _ => return,
        };
        let exported = matches!(item, Item::Macro(m)
            if m.attrs.iter().any(|a| a.path().is_ident("macro_export")));
        let mut path = if exported { Vec::new() } else { self.module() };
        path.push(name(ident));
        self.facts.items.insert(path);
    }

    fn symbol(&mut self, ident: &proc_macro2::Ident) {
        let name = name(ident);
        if DYNAMIC_LOADING_SYMBOLS.contains(&name.as_str()) {
            let loc = self.loc(ident.span());
            self.facts.symbols.push(Symbol { name, loc });
        }
    }

    fn use_tree(&mut self, tree: &UseTree, prefix: &mut Vec<String>, root: Option<&Loc>) {
        let module = self.module();
        let at_root = root.is_none();
        let (public, absolute) = self.use_item;
        let here = |visitor: &Self, ident: &syn::Ident| {
            root.cloned().unwrap_or_else(|| visitor.loc(ident.span()))
        };
        match tree {
            UseTree::Path(p) => {
                if at_root {
                    self.root(&p.ident);
                }
                let loc = here(self, &p.ident);
                prefix.push(name(&p.ident));
                self.use_tree(&p.tree, prefix, Some(&loc));
                prefix.pop();
            }
            UseTree::Name(n) => {
                if at_root {
                    self.root(&n.ident);
                }
                self.symbol(&n.ident);
                let mut path = prefix.clone();
                let local = if n.ident == "self" {
                    prefix.last().cloned().unwrap_or_default()
                } else {
                    path.push(name(&n.ident));
                    name(&n.ident)
                };
                let loc = here(self, &n.ident);
                self.facts.imports.push(Import {
                    module,
                    local,
                    path,
                    public,
                    absolute,
                    loc,
                });
            }
            UseTree::Rename(r) => {
                if at_root {
                    self.root(&r.ident);
                }
                self.symbol(&r.ident);
                let mut path = prefix.clone();
                if r.ident != "self" {
                    path.push(name(&r.ident));
                }
                let local = name(&r.rename);
                let loc = here(self, &r.ident);
                self.facts.imports.push(Import {
                    module,
                    local,
                    path,
                    public,
                    absolute,
                    loc,
                });
            }
            UseTree::Glob(g) => {
                let path = prefix.clone();
                let local = "*".to_owned();
                let loc = root
                    .cloned()
                    .unwrap_or_else(|| self.loc(g.star_token.spans[0]));
                self.facts.imports.push(Import {
                    module,
                    local,
                    path,
                    public,
                    absolute,
                    loc,
                });
            }
            UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(item, prefix, root);
                }
            }
        }
    }

    fn type_def(&mut self, ident: &syn::Ident, attrs: &[Attribute], fields: Vec<&Fields>) {
        let serde = serde_attrs(attrs);
        let denies = serde.flags.iter().any(|f| f == "deny_unknown_fields");
        let mut def = TypeDef {
            ident: name(ident),
            module: self.module(),
            loc: self.loc(ident.span()),
            derives_deserialize: serde.derives,
            refuses_unknown: true,
            flattens: false,
            field_types: Vec::new(),
            fields: Vec::new(),
        };
        for fields in fields {
            def.refuses_unknown &= denies || !matches!(fields, Fields::Named(_));
            for field in fields {
                let flags = serde_attrs(&field.attrs).flags;
                if flags
                    .iter()
                    .any(|f| f == "skip" || f == "skip_deserializing")
                {
                    continue;
                }
                def.flattens |= flags.iter().any(|f| f == "flatten");
                let mut collect = TypePaths(Vec::new());
                collect.visit_type(&field.ty);
                if let Some(ident) = &field.ident {
                    let mut names = vec![name(ident)];
                    names.extend(serde_rename(&field.attrs));
                    def.fields.push(FieldDef {
                        names,
                        holds_secret: collect.0.iter().any(|path| {
                            path.last()
                                .is_some_and(|last| last == "Secret" || last == "SecretUrl")
                        }),
                        loc: self.loc(ident.span()),
                    });
                }
                def.field_types.extend(collect.0);
            }
        }
        self.facts.types.push(def);
    }
}

impl<'ast> Visit<'ast> for Visitor<'_> {
    fn visit_item(&mut self, item: &'ast Item) {
        if !test_only(item_attrs(item)) {
            self.item_name(item);
            visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs: &[Attribute] = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            syn::ImplItem::Macro(i) => &i.attrs,
            _ => &[],
        };
        if !test_only(attrs) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, node: &'ast syn::ItemMod) {
        for attr in &node.attrs {
            self.visit_attribute(attr);
        }
        let module_name = name(&node.ident);
        let written = path_attr(&node.attrs);
        let mut module = self.module();
        module.push(module_name.clone());
        self.facts.modules.insert(module);
        if let Some((_, items)) = &node.content {
            self.inline.push((module_name, written.map(|(p, _)| p)));
            for item in items {
                self.visit_item(item);
            }
            self.inline.pop();
        } else {
            let loc = self.loc(written.as_ref().map_or(node.ident.span(), |(_, s)| *s));
            self.decls.push(ModDecl {
                name: module_name,
                path_attr: written.map(|(p, _)| p),
                inline: self.inline.clone(),
                loc,
            });
        }
    }

    fn visit_item_use(&mut self, node: &'ast syn::ItemUse) {
        for attr in &node.attrs {
            self.visit_attribute(attr);
        }
        self.use_item = (
            matches!(node.vis, syn::Visibility::Public(_)),
            node.leading_colon.is_some(),
        );
        self.use_tree(&node.tree, &mut Vec::new(), None);
        self.use_item = (false, false);
    }

    fn visit_item_extern_crate(&mut self, node: &'ast syn::ItemExternCrate) {
        self.root(&node.ident);
        let loc = self.loc(node.ident.span());
        self.facts.extern_crates.push(ExternCrate {
            name: name(&node.ident),
            alias: node.rename.as_ref().map(|(_, alias)| name(alias)),
            module: self.module(),
            public: matches!(node.vis, syn::Visibility::Public(_)),
            loc,
        });
    }

    fn visit_foreign_item_fn(&mut self, node: &'ast syn::ForeignItemFn) {
        self.symbol(&node.sig.ident);
        visit::visit_foreign_item_fn(self, node);
    }

    fn visit_item_struct(&mut self, node: &'ast syn::ItemStruct) {
        self.type_def(&node.ident, &node.attrs, vec![&node.fields]);
        visit::visit_item_struct(self, node);
    }

    fn visit_item_enum(&mut self, node: &'ast syn::ItemEnum) {
        let fields = node.variants.iter().map(|v| &v.fields).collect();
        self.type_def(&node.ident, &node.attrs, fields);
        visit::visit_item_enum(self, node);
    }

    fn visit_attribute(&mut self, attr: &'ast Attribute) {
        if let Meta::List(list) = &attr.meta {
            self.token_paths(list.tokens.clone());
        }
        visit::visit_attribute(self, attr);
    }

    fn visit_item_impl(&mut self, node: &'ast syn::ItemImpl) {
        let is_driver = node
            .trait_
            .as_ref()
            .and_then(|(path, _)| path.segments.last())
            .is_some_and(|s| s.ident == "Driver");
        if is_driver {
            for item in &node.items {
                if let syn::ImplItem::Type(ty) = item
                    && ty.ident == "Options"
                {
                    let options = match &ty.ty {
                        syn::Type::Path(p) if p.qself.is_none() => {
                            Some(p.path.segments.iter().map(|s| name(&s.ident)).collect())
                        }
                        _ => None,
                    };
                    self.facts.driver_impls.push(DriverImpl {
                        driver: type_name(&node.self_ty),
                        options,
                        module: self.module(),
                        loc: self.loc(ty.ident.span()),
                    });
                }
            }
        }
        if let Some((path, _)) = &node.trait_ {
            self.bare(path);
        }
        visit::visit_item_impl(self, node);
    }

    fn visit_expr_path(&mut self, node: &'ast syn::ExprPath) {
        for attr in &node.attrs {
            self.visit_attribute(attr);
        }
        if let Some(qself) = &node.qself {
            self.visit_qself(qself);
            self.skip_root = qself.position == 0;
        }
        self.visit_path(&node.path);
    }

    fn visit_type_path(&mut self, node: &'ast syn::TypePath) {
        if let Some(qself) = &node.qself {
            self.visit_qself(qself);
            self.skip_root = qself.position == 0;
        } else {
            self.bare(&node.path);
        }
        self.visit_path(&node.path);
    }

    fn visit_trait_bound(&mut self, node: &'ast syn::TraitBound) {
        self.bare(&node.path);
        visit::visit_trait_bound(self, node);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let skip = std::mem::take(&mut self.skip_root);
        if !skip
            && (path.leading_colon.is_some() || path.segments.len() >= 2)
            && let Some(first) = path.segments.first()
        {
            self.root(&first.ident);
            let segments = path.segments.iter().map(|s| name(&s.ident)).collect();
            self.used_path(&first.ident, segments, path.leading_colon.is_some());
        }
        if path.segments.len() >= 2
            && let Some(last) = path.segments.last()
        {
            self.symbol(&last.ident);
        }
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let before = self.facts.paths.len();
        self.bare(&mac.path);
        self.visit_path(&mac.path);
        if let Some(path) = self.facts.paths.get_mut(before) {
            path.macro_call = true;
        }
        let root = mac.path.segments.first().map(|s| self.loc(s.ident.span()));
        let last = mac.path.segments.last().map(|s| name(&s.ident));
        match (last.as_deref(), root) {
            (Some("register_driver"), Some(loc)) => self.facts.registrations.push(loc),
            (Some("define_capability"), Some(loc)) => self.facts.capability_definitions.push(loc),
            (Some("include"), Some(loc)) if is_std_include(&mac.path) => {
                self.facts.includes.push(Include {
                    arg: include_arg(mac.tokens.clone()),
                    from: self.file.to_path_buf(),
                    loc,
                });
            }
            _ => {}
        }
        self.token_paths(mac.tokens.clone());
    }
}
