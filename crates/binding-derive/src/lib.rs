//! `#[derive(XmlType)]`: generates `osprey_binding::XmlType` (and `XmlElement`) impls.
//!
//! Structs with named fields become complex types whose content is a sequence of their
//! fields in declaration order; `Option<T>` fields have `minOccurs="0"`, `Vec<T>` fields
//! `maxOccurs="unbounded"`, `Box<T>` is bound as `T`. Fields are named in lowerCamelCase
//! (`var_int` is `varInt`) unless `#[xml(rename = "...")]` says otherwise. Enums of unit
//! variants become string enumerations. Container attributes:
//! `#[xml(namespace = "urn:x")]` (required), `name = "TypeName"`, and
//! `element = "elementName"` for a payload: a global element with an anonymous type.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::quote;
use syn::{
    parse_macro_input, Data, DeriveInput, Fields, GenericArgument, LitStr, PathArguments, Type,
};

/// Derives `osprey_binding::XmlType`; see the crate documentation for the attributes.
#[proc_macro_derive(XmlType, attributes(xml))]
pub fn derive_xml_type(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

#[derive(Default)]
struct ContainerAttrs {
    namespace: Option<String>,
    name: Option<String>,
    element: Option<String>,
}

fn container_attrs(input: &DeriveInput) -> syn::Result<ContainerAttrs> {
    let mut out = ContainerAttrs::default();
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("xml")) {
        attr.parse_nested_meta(|meta| {
            let value = || -> syn::Result<String> { Ok(meta.value()?.parse::<LitStr>()?.value()) };
            if meta.path.is_ident("namespace") {
                out.namespace = Some(value()?);
            } else if meta.path.is_ident("name") {
                out.name = Some(value()?);
            } else if meta.path.is_ident("element") {
                out.element = Some(value()?);
            } else {
                return Err(meta.error("expected `namespace`, `name` or `element`"));
            }
            Ok(())
        })?;
    }
    Ok(out)
}

fn rename_attr(attrs: &[syn::Attribute]) -> syn::Result<Option<String>> {
    let mut out = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("xml")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                out = Some(meta.value()?.parse::<LitStr>()?.value());
                Ok(())
            } else {
                Err(meta.error("expected `rename`"))
            }
        })?;
    }
    Ok(out)
}

fn lower_camel(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.trim_start_matches("r#").chars() {
        if c == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "XmlType cannot be derived for generic types",
        ));
    }
    let attrs = container_attrs(input)?;
    let Some(ns) = attrs.namespace.clone() else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "missing #[xml(namespace = \"...\")]",
        ));
    };
    let ident = &input.ident;
    let type_name = attrs
        .element
        .clone()
        .or(attrs.name.clone())
        .unwrap_or_else(|| ident.to_string());
    let body = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => expand_struct(&ns, &type_name, attrs.element.is_some(), named)?,
            _ => return Err(syn::Error::new_spanned(ident, "XmlType needs named fields")),
        },
        Data::Enum(e) => expand_enum(&ns, &type_name, e)?,
        Data::Union(_) => {
            return Err(syn::Error::new_spanned(
                ident,
                "XmlType cannot be derived for unions",
            ))
        }
    };
    let element_impl = attrs.element.as_ref().map(|el| {
        quote! {
            impl ::osprey_binding::XmlElement for #ident {
                const NS: &'static str = #ns;
                const LOCAL: &'static str = #el;
            }
        }
    });
    Ok(quote! {
        impl ::osprey_binding::XmlType for #ident { #body }
        #element_impl
    })
}

enum Occurs<'a> {
    One(&'a Type),
    Optional(&'a Type),
    Many(&'a Type),
}

fn occurs(ty: &Type) -> Occurs<'_> {
    if let Type::Path(p) = ty {
        if let Some(last) = p.path.segments.last() {
            if let PathArguments::AngleBracketed(args) = &last.arguments {
                if let Some(GenericArgument::Type(inner)) = args.args.first() {
                    if last.ident == "Option" {
                        return Occurs::Optional(inner);
                    }
                    if last.ident == "Vec" {
                        return Occurs::Many(inner);
                    }
                }
            }
        }
    }
    Occurs::One(ty)
}

fn expand_struct(
    ns: &str,
    type_name: &str,
    anonymous: bool,
    fields: &syn::FieldsNamed,
) -> syn::Result<Tokens> {
    let mut descs = Vec::new();
    let mut encodes = Vec::new();
    let mut decodes = Vec::new();
    let mut idents = Vec::new();
    let mut names = Vec::new();
    for field in &fields.named {
        let ident = field.ident.as_ref().expect("named fields have identifiers");
        names.push(rename_attr(&field.attrs)?.unwrap_or_else(|| lower_camel(&ident.to_string())));
    }
    // A field's child is read lazily: `__next` holds the child already read (`Some(None)`:
    // the element ended) or nothing (`None`), in which case the field reads its own child,
    // whole in one step when it is a plain leaf of a simple type (`decode_leaf`), else by
    // its start tag, expecting its own name.
    let take_child = |name: &String| {
        quote! {
            match __next.take() {
                Some(__s) => __s,
                None => __r.next_child_expecting(#name)?,
            }
        }
    };
    for (i, field) in fields.named.iter().enumerate() {
        let ident = field.ident.as_ref().expect("named fields have identifiers");
        let name = &names[i];
        // A simple type's value is text: its element is written as a leaf, in one go.
        let encode_one = |ty: &Type, value: Tokens| {
            quote! {
                if <#ty as ::osprey_binding::XmlType>::TEXT_ONLY {
                    __w.leaf_static(#ns, #name, |__w| ::osprey_binding::XmlType::encode(#value, __w));
                } else {
                    __w.start_static(#ns, #name);
                    ::osprey_binding::XmlType::encode(#value, __w);
                    __w.end();
                }
            }
        };
        let child = take_child(name);
        // The field's value read whole as a leaf, when no child is read yet and it is one.
        let leaf = |t: &Type| {
            quote! {
                if __next.is_none() { ::osprey_binding::decode_leaf::<#t>(__r, __leaves, #name)? } else { None }
            }
        };
        let (inner, min, max) = match occurs(&field.ty) {
            Occurs::One(t) => {
                encodes.push(encode_one(t, quote!(&self.#ident)));
                let leaf = leaf(t);
                decodes.push(quote! {
                    let #ident = match #leaf {
                        Some(__v) => __v,
                        None => match #child {
                            Some(__s) if __s.is(#ns, #name) => {
                                <#t as ::osprey_binding::XmlType>::decode(__r).map_err(|__e| __e.in_element(#name))?
                            }
                            other => return Err(::osprey_binding::DecodeError::missing(#name, other)),
                        },
                    };
                });
                (t, 1u32, quote!(::osprey_binding::MaxOccurs::One))
            }
            Occurs::Optional(t) => {
                let enc = encode_one(t, quote!(__v));
                encodes.push(quote! { if let Some(__v) = &self.#ident { #enc } });
                let leaf = leaf(t);
                decodes.push(quote! {
                    let #ident = match #leaf {
                        Some(__v) => Some(__v),
                        None => match #child {
                            Some(__s) if __s.is(#ns, #name) => {
                                Some(<#t as ::osprey_binding::XmlType>::decode(__r).map_err(|__e| __e.in_element(#name))?)
                            }
                            other => { __next = Some(other); None }
                        },
                    };
                });
                (t, 0, quote!(::osprey_binding::MaxOccurs::One))
            }
            Occurs::Many(t) => {
                let enc = encode_one(t, quote!(__v));
                encodes.push(quote! { for __v in &self.#ident { #enc } });
                let leaf = leaf(t);
                decodes.push(quote! {
                    let mut #ident = Vec::new();
                    loop {
                        if let Some(__v) = #leaf {
                            #ident.push(__v);
                            continue;
                        }
                        match #child {
                            Some(__s) if __s.is(#ns, #name) => {
                                #ident.push(<#t as ::osprey_binding::XmlType>::decode(__r).map_err(|__e| __e.in_element(#name))?);
                            }
                            other => { __next = Some(other); break; }
                        }
                    }
                });
                (t, 0, quote!(::osprey_binding::MaxOccurs::Unbounded))
            }
        };
        descs.push(quote! {
            ::osprey_binding::FieldDesc {
                name: #name,
                ty: <#inner as ::osprey_binding::XmlType>::schema,
                min_occurs: #min,
                max_occurs: #max,
            }
        });
        idents.push(ident);
    }
    Ok(quote! {
        fn schema() -> &'static ::osprey_binding::TypeDesc {
            static DESC: ::osprey_binding::TypeDesc = ::osprey_binding::TypeDesc::Complex(::osprey_binding::ComplexType {
                name: #type_name,
                namespace: #ns,
                fields: &[#(#descs),*],
                anonymous: #anonymous,
            });
            &DESC
        }

        fn encode(&self, __w: &mut ::osprey_binding::xml::XmlWriter) {
            #(#encodes)*
        }

        #[allow(unused_mut, unused_variables)]
        fn decode(__r: &mut ::osprey_binding::xml::XmlReader<'_>) -> Result<Self, ::osprey_binding::DecodeError> {
            // Unprefixed children without declarations are in the default namespace: ours?
            let __leaves = __r.default_namespace_is(#ns);
            let mut __next: Option<Option<::osprey_binding::xml::StartElement<'_>>> = None;
            #(#decodes)*
            let __rest = match __next {
                Some(__s) => __s,
                None => __r.next_child()?,
            };
            if let Some(__s) = __rest {
                return Err(::osprey_binding::DecodeError::unexpected(&__s));
            }
            Ok(Self { #(#idents),* })
        }
    })
}

fn expand_enum(ns: &str, type_name: &str, data: &syn::DataEnum) -> syn::Result<Tokens> {
    let mut names = Vec::new();
    let mut variants = Vec::new();
    for v in &data.variants {
        if !matches!(v.fields, Fields::Unit) {
            return Err(syn::Error::new_spanned(
                v,
                "XmlType enums must have unit variants only",
            ));
        }
        names.push(rename_attr(&v.attrs)?.unwrap_or_else(|| v.ident.to_string()));
        variants.push(&v.ident);
    }
    let xsd_type = format!("{{{ns}}}{type_name}");
    Ok(quote! {
        fn schema() -> &'static ::osprey_binding::TypeDesc {
            static DESC: ::osprey_binding::TypeDesc = ::osprey_binding::TypeDesc::Enumeration(::osprey_binding::EnumType {
                name: #type_name,
                namespace: #ns,
                values: &[#(#names),*],
            });
            &DESC
        }

        fn encode(&self, w: &mut ::osprey_binding::xml::XmlWriter) {
            w.text(match self { #(Self::#variants => #names),* });
        }

        fn decode(r: &mut ::osprey_binding::xml::XmlReader<'_>) -> Result<Self, ::osprey_binding::DecodeError> {
            Self::from_text(&r.read_text()?)
        }

        const TEXT_ONLY: bool = true;

        fn from_text(text: &str) -> Result<Self, ::osprey_binding::DecodeError> {
            match text.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n')) {
                #(#names => Ok(Self::#variants),)*
                _ => Err(::osprey_binding::DecodeError::invalid(text, #xsd_type)),
            }
        }
    })
}
