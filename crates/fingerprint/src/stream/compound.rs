//! Arrays and objects. An object's members are written straight into the document, each as
//! `"key":value`; when they end, members that came out of JCS order are written back sorted.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::ops::Range;

use serde::ser::{self, Serialize};

use super::key::KeySerializer;
use super::{Canon, Writer, push_str};
use crate::Error;

/// An array being written.
pub(super) struct Seq<'a> {
    w: &'a mut Writer,
    first: bool,
    /// Inside `{"variant":` …, which needs its closing brace.
    variant: bool,
}

impl<'a> Seq<'a> {
    pub(super) fn new(w: &'a mut Writer, variant: bool) -> Self {
        w.out.push(b'[');
        Seq {
            w,
            first: true,
            variant,
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        if !self.first {
            self.w.out.push(b',');
        }
        self.first = false;
        value.serialize(Canon { w: &mut *self.w })
    }

    fn finish(self) {
        self.w.out.push(b']');
        if self.variant {
            self.w.out.push(b'}');
        }
    }
}

macro_rules! seq_impl {
    ($trait:ident, $method:ident) => {
        impl ser::$trait for Seq<'_> {
            type Ok = ();
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.element(value)
            }
            fn end(self) -> Result<(), Error> {
                self.finish();
                Ok(())
            }
        }
    };
}

seq_impl!(SerializeSeq, serialize_element);
seq_impl!(SerializeTuple, serialize_element);
seq_impl!(SerializeTupleStruct, serialize_field);
seq_impl!(SerializeTupleVariant, serialize_field);

/// One member of an open object: its key, and where `"key":value` sits in the document.
pub(super) struct Member {
    key: Cow<'static, str>,
    /// Whether the key is ASCII, where JCS order is byte order.
    ascii: bool,
    span: Range<usize>,
}

/// JCS orders members by the UTF-16 code units of their names, which differs from byte order
/// only when a name holds a character above U+FFFF; keys are almost always ASCII.
fn jcs_order(a: &Member, b: &Member) -> Ordering {
    if a.ascii && b.ascii {
        a.key.as_bytes().cmp(b.key.as_bytes())
    } else {
        a.key.encode_utf16().cmp(b.key.encode_utf16())
    }
}

/// An object being written.
pub(super) struct Object<'a> {
    w: &'a mut Writer,
    /// Where the members begin in the document (just after `{`).
    open: usize,
    /// Where this object's members begin in `w.members`.
    base: usize,
    /// The key of the entry whose value comes next (maps give key and value apart).
    pending_key: Option<String>,
    /// Inside `{"variant":` …, which needs its closing brace.
    variant: bool,
}

impl<'a> Object<'a> {
    pub(super) fn new(w: &'a mut Writer, variant: bool) -> Self {
        w.out.push(b'{');
        Object {
            open: w.out.len(),
            base: w.members.len(),
            w,
            pending_key: None,
            variant,
        }
    }

    fn member<T: Serialize + ?Sized>(&mut self, key: Cow<'static, str>, value: &T) -> Result<(), Error> {
        if self.w.members.len() > self.base {
            self.w.out.push(b',');
        }
        let start = self.w.out.len();
        push_str(&mut self.w.out, &key);
        self.w.out.push(b':');
        value.serialize(Canon { w: &mut *self.w })?;
        let span = start..self.w.out.len();
        let ascii = key.is_ascii();
        self.w.members.push(Member { key, ascii, span });
        Ok(())
    }

    fn finish(self) {
        let Writer {
            out,
            scratch,
            members,
            sorted_root,
        } = &mut *self.w;
        let mine = &mut members[self.base..];
        let in_order = mine
            .windows(2)
            .all(|pair| jcs_order(&pair[0], &pair[1]) == Ordering::Less);
        if !in_order {
            // A stable sort keeps a repeated key's entries in arrival order, so the last one wins,
            // as in a `serde_json::Map`.
            mine.sort_by(jcs_order);
            let kept = |i: usize, member: &Member| mine.get(i + 1).is_none_or(|next| next.key != member.key);
            if let Some(root) = sorted_root.as_mut().filter(|_| self.open == 1) {
                // The outermost object: whoever reads the pieces takes the members in this order.
                root.extend(
                    mine.iter()
                        .enumerate()
                        .filter(|(i, m)| kept(*i, m))
                        .map(|(_, m)| m.span.clone()),
                );
                members.truncate(self.base);
                out.push(b'}');
                return;
            }
            scratch.clear();
            scratch.extend_from_slice(&out[self.open..]);
            out.truncate(self.open);
            let mut first = true;
            for (i, member) in mine.iter().enumerate() {
                if !kept(i, member) {
                    continue;
                }
                if !first {
                    out.push(b',');
                }
                first = false;
                out.extend_from_slice(&scratch[member.span.start - self.open..member.span.end - self.open]);
            }
        }
        members.truncate(self.base);
        out.push(b'}');
        if self.variant {
            out.push(b'}');
        }
    }
}

impl ser::SerializeMap for Object<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.pending_key = Some(key.serialize(KeySerializer)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self
            .pending_key
            .take()
            .ok_or_else(|| Error::NotJson("a map value without its key".to_owned()))?;
        self.member(Cow::Owned(key), value)
    }
    fn end(self) -> Result<(), Error> {
        self.finish();
        Ok(())
    }
}

macro_rules! struct_impl {
    ($trait:ident) => {
        impl ser::$trait for Object<'_> {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Error> {
                self.member(Cow::Borrowed(key), value)
            }
            fn end(self) -> Result<(), Error> {
                self.finish();
                Ok(())
            }
        }
    };
}

struct_impl!(SerializeStruct);
struct_impl!(SerializeStructVariant);
