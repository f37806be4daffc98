//! Whether a value holds only finite floats: a serializer that writes nothing and refuses
//! a NaN or an infinity wherever it sits. JSON writes each of those as `null`, so a JSON
//! digest is an injective memo key only for values this accepts.

use serde::Serialize;
use serde::ser;

/// Why a value was refused: a non-finite float, or its own serialisation failed.
#[derive(Debug)]
pub struct NotFinite;

impl std::fmt::Display for NotFinite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a non-finite float")
    }
}

impl std::error::Error for NotFinite {}

impl ser::Error for NotFinite {
    fn custom<T: std::fmt::Display>(_: T) -> NotFinite {
        NotFinite
    }
}

/// Whether every float in `value` is finite (and `value` serialises at all).
pub fn holds_only_finite_floats<T: Serialize + ?Sized>(value: &T) -> bool {
    value.serialize(Check).is_ok()
}

#[derive(Clone, Copy)]
struct Check;

type Done = Result<(), NotFinite>;

/// Serializer methods that accept a value of no parts (scalars, names, unit forms).
macro_rules! accepts {
    ($($method:ident($($arg:ty),*)),* $(,)?) => {$(
        fn $method(self, $(_: $arg),*) -> Done {
            Ok(())
        }
    )*};
}

/// Serializer methods that open a compound, walked by this same check.
macro_rules! opens {
    ($($method:ident($($arg:ty),*)),* $(,)?) => {$(
        fn $method(self, $(_: $arg),*) -> Result<Check, NotFinite> {
            Ok(self)
        }
    )*};
}

impl ser::Serializer for Check {
    type Ok = ();
    type Error = NotFinite;
    type SerializeSeq = Check;
    type SerializeTuple = Check;
    type SerializeTupleStruct = Check;
    type SerializeTupleVariant = Check;
    type SerializeMap = Check;
    type SerializeStruct = Check;
    type SerializeStructVariant = Check;

    fn serialize_f64(self, v: f64) -> Done {
        if v.is_finite() {
            Ok(())
        } else {
            Err(NotFinite)
        }
    }
    fn serialize_f32(self, v: f32) -> Done {
        self.serialize_f64(f64::from(v))
    }
    accepts!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Done {
        v.serialize(self)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Done {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        v: &T,
    ) -> Done {
        v.serialize(self)
    }
    opens!(
        serialize_seq(Option<usize>),
        serialize_tuple(usize),
        serialize_tuple_struct(&'static str, usize),
        serialize_tuple_variant(&'static str, u32, &'static str, usize),
        serialize_map(Option<usize>),
        serialize_struct(&'static str, usize),
        serialize_struct_variant(&'static str, u32, &'static str, usize),
    );
}

/// Every compound walks its parts with the same check.
macro_rules! walks_parts {
    ($($tr:ident :: $method:ident),*) => {$(
        impl ser::$tr for Check {
            type Ok = ();
            type Error = NotFinite;
            fn $method<T: Serialize + ?Sized>(&mut self, v: &T) -> Done {
                v.serialize(Check)
            }
            fn end(self) -> Done {
                Ok(())
            }
        }
    )*};
}

walks_parts!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Check {
    type Ok = ();
    type Error = NotFinite;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Done {
        k.serialize(Check)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Done {
        v.serialize(Check)
    }
    fn end(self) -> Done {
        Ok(())
    }
}

/// Every named field is walked with the same check.
macro_rules! walks_fields {
    ($($tr:ident),*) => {$(
        impl ser::$tr for Check {
            type Ok = ();
            type Error = NotFinite;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, _: &'static str, v: &T) -> Done {
                v.serialize(Check)
            }
            fn end(self) -> Done {
                Ok(())
            }
        }
    )*};
}

walks_fields!(SerializeStruct, SerializeStructVariant);

#[cfg(test)]
mod tests {
    use super::holds_only_finite_floats;
    use serde_json::json;
    use std::collections::BTreeMap;

    /// A non-finite float is found wherever it sits: alone, in an option, a sequence, a
    /// tuple, a map's value or key position, a struct's field; finite ones and JSON
    /// (which cannot hold one) pass.
    #[test]
    fn a_non_finite_float_is_found_at_any_depth() {
        #[derive(serde::Serialize)]
        struct S {
            a: Vec<Option<(u8, f64)>>,
        }
        #[derive(serde::Serialize)]
        enum E {
            V { x: f32 },
        }
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(!holds_only_finite_floats(&bad));
            assert!(!holds_only_finite_floats(&S {
                a: vec![None, Some((1, bad))]
            }));
            let map: BTreeMap<&str, Vec<f64>> = [("k", vec![0.5, bad])].into();
            assert!(!holds_only_finite_floats(&map));
        }
        /// A map keyed by a float (JSON would write the key as a string).
        struct FloatKey(f64);
        impl serde::Serialize for FloatKey {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry(&self.0, &1)?;
                m.end()
            }
        }
        assert!(!holds_only_finite_floats(&FloatKey(f64::NAN)));
        assert!(holds_only_finite_floats(&FloatKey(0.5)));
        assert!(!holds_only_finite_floats(&E::V { x: f32::NAN }));
        assert!(holds_only_finite_floats(&E::V { x: 1.5 }));
        assert!(holds_only_finite_floats(&S {
            a: vec![Some((1, -0.0)), Some((2, f64::MAX))]
        }));
        assert!(holds_only_finite_floats(
            &json!({"a": [1.5, null, {"b": 2}]})
        ));
    }
}
