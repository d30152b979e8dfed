//! `renamed_from` on `table` and `column` blocks: the object's old name, which lets a plan rename
//! it instead of dropping it and creating it again.

use hcl_edit::Span;

use super::super::ReadError;
use super::{Attrs, Reader};

impl Reader<'_> {
    /// The `renamed_from` attribute of the block `owner`, if it has one.
    pub(super) fn renamed_from(
        &self,
        attrs: &mut Attrs<'_>,
        owner: &str,
    ) -> Result<Option<String>, ReadError> {
        let Some(a) = attrs.take("renamed_from") else {
            return Ok(None);
        };
        let from = self.string(&a.value)?;
        if from.trim().is_empty() {
            return Err(self.invalid(
                a.value.span(),
                format!("{owner}: renamed_from must name the old name"),
            ));
        }
        Ok(Some(from))
    }
}
