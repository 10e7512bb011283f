//! Reading attributes and macro arguments: serde's, `cfg(test)`, `#[path]`, `include!`.

use proc_macro2::Span;
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, Expr, Item, Lit, Meta, Token};

use super::facts::IncludeArg;
use super::tokens::{self, name};

/// What `#[derive(…)]` and `#[serde(…)]` say, `cfg_attr` included.
pub(super) struct SerdeAttrs {
    pub(super) derives: bool,
    pub(super) flags: Vec<String>,
}

pub(super) fn serde_attrs(attrs: &[Attribute]) -> SerdeAttrs {
    let mut out = SerdeAttrs {
        derives: false,
        flags: Vec::new(),
    };
    let mut metas: Vec<Meta> = attrs.iter().map(|a| a.meta.clone()).collect();
    while let Some(meta) = metas.pop() {
        let Meta::List(list) = meta else { continue };
        if list.path.is_ident("cfg_attr") {
            let parsed = list.parse_args_with(|input: syn::parse::ParseStream<'_>| {
                let _predicate: Meta = input.parse()?;
                let _: Token![,] = input.parse()?;
                Punctuated::<Meta, Token![,]>::parse_terminated(input)
            });
            metas.extend(parsed.into_iter().flatten());
        } else if list.path.is_ident("derive") {
            let paths = list.parse_args_with(Punctuated::<syn::Path, Token![,]>::parse_terminated);
            out.derives |= paths
                .into_iter()
                .flatten()
                .any(|p| p.segments.last().is_some_and(|s| s.ident == "Deserialize"));
        } else if list.path.is_ident("serde") {
            out.flags.extend(tokens::top_level_idents(list.tokens));
        }
    }
    out
}

/// Paths of every type named in a field's type, nested generic arguments included.
pub(super) struct TypePaths(pub(super) Vec<Vec<String>>);

impl Visit<'_> for TypePaths {
    fn visit_type_path(&mut self, node: &syn::TypePath) {
        if node.qself.is_none() {
            self.0
                .push(node.path.segments.iter().map(|s| name(&s.ident)).collect());
        }
        visit::visit_type_path(self, node);
    }
}

/// The `rename = "…"` of a field's `#[serde(…)]`: the key INFRA spells.
pub(super) fn serde_rename(attrs: &[Attribute]) -> Option<String> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("serde"))
        .filter_map(|attr| {
            attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
                .ok()
        })
        .flatten()
        .find_map(|meta| match meta {
            Meta::NameValue(nv) if nv.path.is_ident("rename") => match nv.value {
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
}

/// Items compiled only for tests: `#[cfg(test)]` or `#[cfg(all(…, test, …))]`.
pub(crate) fn test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        let Meta::List(list) = &attr.meta else {
            return false;
        };
        if !list.path.is_ident("cfg") {
            return false;
        }
        match list.parse_args::<Meta>() {
            Ok(Meta::Path(p)) => p.is_ident("test"),
            Ok(Meta::List(all)) if all.path.is_ident("all") => tokens::top_level_idents(all.tokens)
                .iter()
                .any(|i| i == "test"),
            _ => false,
        }
    })
}

pub(super) fn item_attrs(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// `#[path = "…"]`, if present.
pub(crate) fn path_attr(attrs: &[Attribute]) -> Option<(String, Span)> {
    attrs.iter().find_map(|attr| match &attr.meta {
        Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            Expr::Lit(lit) => match &lit.lit {
                Lit::Str(s) => Some((s.value(), attr.pound_token.span)),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    })
}

pub(super) fn include_arg(tokens: proc_macro2::TokenStream) -> IncludeArg {
    match syn::parse2::<Expr>(tokens) {
        Ok(Expr::Lit(lit)) => match lit.lit {
            Lit::Str(s) => IncludeArg::Literal(s.value()),
            _ => IncludeArg::Computed,
        },
        Ok(Expr::Macro(m)) if m.mac.path.is_ident("concat") => {
            let parts = m
                .mac
                .parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated);
            let from_out_dir = parts
                .ok()
                .and_then(|p| p.into_iter().next())
                .is_some_and(|first| {
                    matches!(first, Expr::Macro(env) if env.mac.path.is_ident("env")
                    && env.mac.parse_body::<syn::LitStr>().is_ok_and(|s| s.value() == "OUT_DIR"))
                });
            if from_out_dir {
                IncludeArg::OutDir
            } else {
                IncludeArg::Computed
            }
        }
        _ => IncludeArg::Computed,
    }
}

pub(super) fn is_std_include(path: &syn::Path) -> bool {
    let segments: Vec<String> = path.segments.iter().map(|s| name(&s.ident)).collect();
    matches!(
        segments
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
        ["include"] | ["std" | "core", "include"]
    )
}

pub(super) fn type_name(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .map_or_else(|| "?".to_owned(), |s| name(&s.ident)),
        _ => "?".to_owned(),
    }
}
