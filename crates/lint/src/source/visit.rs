//! The syn visitor that turns one parsed file into [`Facts`].

use std::path::Path;

use proc_macro2::Span;
use syn::visit::{self, Visit};
use syn::{Attribute, Fields, Item, Meta, UseTree};

use super::attrs::{
    TypePaths, include_arg, is_std_include, item_attrs, path_attr, serde_attrs, test_only,
    type_name,
};
use super::facts::{
    DriverImpl, ExternCrate, Facts, Import, Include, Loc, PathRoot, Symbol, TypeDef,
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

    fn symbol(&mut self, ident: &proc_macro2::Ident) {
        let name = name(ident);
        if DYNAMIC_LOADING_SYMBOLS.contains(&name.as_str()) {
            let loc = self.loc(ident.span());
            self.facts.symbols.push(Symbol { name, loc });
        }
    }

    fn use_tree(&mut self, tree: &UseTree, prefix: &mut Vec<String>, at_root: bool) {
        let module = self.module();
        match tree {
            UseTree::Path(p) => {
                if at_root {
                    self.root(&p.ident);
                }
                prefix.push(name(&p.ident));
                self.use_tree(&p.tree, prefix, false);
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
                self.facts.imports.push(Import {
                    module,
                    local,
                    path,
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
                self.facts.imports.push(Import {
                    module,
                    local,
                    path,
                });
            }
            UseTree::Glob(_) => {
                let path = prefix.clone();
                let local = "*".to_owned();
                self.facts.imports.push(Import {
                    module,
                    local,
                    path,
                });
            }
            UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(item, prefix, at_root);
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
                def.field_types.extend(collect.0);
            }
        }
        self.facts.types.push(def);
    }
}

impl<'ast> Visit<'ast> for Visitor<'_> {
    fn visit_item(&mut self, item: &'ast Item) {
        if !test_only(item_attrs(item)) {
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
        self.use_tree(&node.tree, &mut Vec::new(), true);
    }

    fn visit_item_extern_crate(&mut self, node: &'ast syn::ItemExternCrate) {
        self.root(&node.ident);
        self.facts.extern_crates.push(ExternCrate {
            name: name(&node.ident),
            alias: node.rename.as_ref().map(|(_, alias)| name(alias)),
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
            let mut found = Vec::new();
            tokens::path_roots(list.tokens.clone(), &mut found);
            for ident in &found {
                self.root(ident);
            }
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
        }
        self.visit_path(&node.path);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let skip = std::mem::take(&mut self.skip_root);
        if !skip
            && (path.leading_colon.is_some() || path.segments.len() >= 2)
            && let Some(first) = path.segments.first()
        {
            self.root(&first.ident);
        }
        if path.segments.len() >= 2
            && let Some(last) = path.segments.last()
        {
            self.symbol(&last.ident);
        }
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
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
        let mut found = Vec::new();
        tokens::path_roots(mac.tokens.clone(), &mut found);
        for ident in &found {
            self.root(ident);
        }
    }
}
