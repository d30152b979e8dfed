//! Canonical JSON written straight from `Serialize`, without a `serde_json::Value` tree.
//!
//! The bytes equal `canonical_json_value(&serde_json::to_value(v)?)` for every value the model and
//! the API hold (a property test checks it). Everything is written into one buffer in the order
//! `Serialize` gives it; an object whose members came out of order is rewritten in place through
//! one scratch buffer shared by the whole document, so a document costs about twice its own size
//! in memory and no allocation per object. The one difference from going through `Value`: a map
//! key that is a float is refused here, where `serde_json` would print it with its own float
//! formatting; nothing hashed here has such keys.

mod compound;
mod key;

use serde::ser::{self, Serialize};

use compound::{Member, Object, Seq};

use crate::{
    Error,
    scalar::{ecmascript_number, write_string},
};

impl ser::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Error::NotJson(msg.to_string())
    }
}

/// The canonical JSON bytes of `value`.
pub(crate) fn to_canonical<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
    let mut writer = Writer::default();
    value.serialize(Canon { w: &mut writer })?;
    Ok(writer.out)
}

/// The bytes of [`to_canonical`], handed to `sink` in pieces. An outermost object whose members
/// came out of order is not rewritten: its members go to `sink` sorted, from where they were
/// written, which saves copying the whole document twice and holding it twice.
pub(crate) fn canonical_pieces<T: Serialize + ?Sized>(
    value: &T,
    mut sink: impl FnMut(&[u8]),
) -> Result<(), Error> {
    let mut writer = Writer {
        sorted_root: Some(Vec::new()),
        ..Writer::default()
    };
    value.serialize(Canon { w: &mut writer })?;
    match writer.sorted_root {
        Some(spans) if !spans.is_empty() => {
            sink(b"{");
            for (i, span) in spans.into_iter().enumerate() {
                if i > 0 {
                    sink(b",");
                }
                sink(&writer.out[span]);
            }
            sink(b"}");
        }
        _ => sink(&writer.out),
    }
    Ok(())
}

/// The document being written, with the scratch space its objects share.
#[derive(Default)]
struct Writer {
    out: Vec<u8>,
    /// An out-of-order object's members while they are written back sorted.
    scratch: Vec<u8>,
    /// The members of every object still open, innermost last.
    members: Vec<Member>,
    /// When set, an out-of-order outermost object leaves its members where they are and records
    /// their spans here, sorted (see [`canonical_pieces`]).
    sorted_root: Option<Vec<std::ops::Range<usize>>>,
}

/// Writes one value into the document.
struct Canon<'a> {
    w: &'a mut Writer,
}

fn push_display(out: &mut Vec<u8>, value: impl std::fmt::Display) {
    use std::io::Write as _;
    // Writing into a Vec cannot fail.
    let _ = write!(out, "{value}");
}

fn push_str(out: &mut Vec<u8>, s: &str) {
    write_string(out, s);
}

/// A float as `serde_json::Value` holds it: non-finite numbers become `null`.
fn push_float(out: &mut Vec<u8>, f: f64) -> Result<(), Error> {
    if f.is_finite() {
        out.extend_from_slice(ecmascript_number(f)?.as_bytes());
    } else {
        out.extend_from_slice(b"null");
    }
    Ok(())
}

/// `{"variant":` … `}` around an externally tagged enum's content.
fn open_variant(out: &mut Vec<u8>, variant: &str) {
    out.push(b'{');
    push_str(out, variant);
    out.push(b':');
}

impl<'a> ser::Serializer for Canon<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Seq<'a>;
    type SerializeTuple = Seq<'a>;
    type SerializeTupleStruct = Seq<'a>;
    type SerializeTupleVariant = Seq<'a>;
    type SerializeMap = Object<'a>;
    type SerializeStruct = Object<'a>;
    type SerializeStructVariant = Object<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.w.out.extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        push_display(&mut self.w.out, v);
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        if i64::try_from(v).is_ok() || u64::try_from(v).is_ok() {
            push_display(&mut self.w.out, v);
            Ok(())
        } else {
            Err(Error::NotJson("number out of range".to_owned()))
        }
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        push_display(&mut self.w.out, v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        match u64::try_from(v) {
            Ok(v) => self.serialize_u64(v),
            Err(_) => Err(Error::NotJson("number out of range".to_owned())),
        }
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        push_float(&mut self.w.out, f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        push_float(&mut self.w.out, v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        push_str(&mut self.w.out, v.encode_utf8(&mut [0u8; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        push_str(&mut self.w.out, v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        self.w.out.push(b'[');
        for (i, b) in v.iter().enumerate() {
            if i > 0 {
                self.w.out.push(b',');
            }
            push_display(&mut self.w.out, b);
        }
        self.w.out.push(b']');
        Ok(())
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.w.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        open_variant(&mut self.w.out, variant);
        value.serialize(Canon { w: &mut *self.w })?;
        self.w.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Seq<'a>, Error> {
        Ok(Seq::new(self.w, false))
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Seq<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Seq<'a>, Error> {
        open_variant(&mut self.w.out, variant);
        Ok(Seq::new(self.w, true))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Object<'a>, Error> {
        Ok(Object::new(self.w, false))
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Object<'a>, Error> {
        Ok(Object::new(self.w, false))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Object<'a>, Error> {
        open_variant(&mut self.w.out, variant);
        Ok(Object::new(self.w, true))
    }
}
