//! HCL values: strings, numbers, literals, keywords and type expressions.

use hcl_edit::Span;
use hcl_edit::expr::{Expression, UnaryOperator};

use crate::model::{DataType, DefaultValue, Literal, QualifiedName};
use crate::normalize::{canonical_number, default_value};
use crate::types::parse_type_with;

use super::super::ReadError;
use super::Reader;

impl Reader<'_> {
    /// A string literal.
    pub fn string(&self, expr: &Expression) -> Result<String, ReadError> {
        match expr {
            Expression::String(s) => Ok(s.value().clone()),
            _ => Err(self.invalid(expr.span(), "expected a string".to_owned())),
        }
    }

    /// A list of string literals.
    pub fn strings(&self, expr: &Expression) -> Result<Vec<String>, ReadError> {
        match expr {
            Expression::Array(a) => a.iter().map(|e| self.string(e)).collect(),
            _ => Err(self.invalid(expr.span(), "expected a list of strings".to_owned())),
        }
    }

    /// A boolean literal.
    pub fn boolean(&self, expr: &Expression) -> Result<bool, ReadError> {
        match expr {
            Expression::Bool(b) => Ok(*b.value()),
            _ => Err(self.invalid(expr.span(), "expected true or false".to_owned())),
        }
    }

    /// A bare keyword such as `CASCADE` or `ALWAYS`.
    pub fn keyword(&self, expr: &Expression) -> Result<String, ReadError> {
        match expr {
            Expression::Variable(v) => Ok(v.as_str().to_owned()),
            _ => Err(self.invalid(expr.span(), "expected a keyword".to_owned())),
        }
    }

    /// A number's source text (HCL numbers are read as written, never through a float).
    fn number_text(&self, expr: &Expression) -> Option<String> {
        match expr {
            Expression::Number(_) => expr.span().and_then(|s| self.text.get(s)).map(str::to_owned),
            Expression::UnaryOp(op) if *op.operator.value() == UnaryOperator::Neg => {
                self.number_text(&op.expr).map(|t| format!("-{t}"))
            }
            _ => None,
        }
    }

    /// A small unsigned integer.
    pub fn count(&self, expr: &Expression) -> Result<u32, ReadError> {
        self.number_text(expr)
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| self.invalid(expr.span(), "expected a non-negative integer".to_owned()))
    }

    /// A whole number that fits in 64 bits, negative or not.
    pub fn integer(&self, expr: &Expression) -> Result<i64, ReadError> {
        self.number_text(expr)
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| self.invalid(expr.span(), "expected a 64-bit integer".to_owned()))
    }

    /// A constant: null, a boolean, a number or a string.
    pub fn literal(&self, expr: &Expression) -> Result<Literal, ReadError> {
        match expr {
            Expression::Null(_) => Ok(Literal::Null),
            Expression::Bool(b) => Ok(Literal::Bool(*b.value())),
            Expression::String(s) => Ok(Literal::String(s.value().clone())),
            _ => match self.number_text(expr) {
                Some(t) => Ok(Literal::Number(canonical_number(&t))),
                None => Err(self.invalid(
                    expr.span(),
                    "expected null, a boolean, a number or a string".to_owned(),
                )),
            },
        }
    }

    /// The argument of `sql("…")`, if `expr` is such a call.
    pub fn sql_call(&self, expr: &Expression) -> Result<Option<String>, ReadError> {
        if let Expression::FuncCall(f) = expr
            && f.name.namespace.is_empty()
            && f.name.name.as_str() == "sql"
        {
            let args: Vec<&Expression> = f.args.iter().collect();
            return match args.as_slice() {
                [one] => Ok(Some(self.string(one)?)),
                _ => Err(self.invalid(expr.span(), "sql() takes one string".to_owned())),
            };
        }
        Ok(None)
    }

    /// A column default: a literal or `sql("…")`.
    pub fn default(&self, expr: &Expression) -> Result<DefaultValue, ReadError> {
        match self.sql_call(expr)? {
            Some(text) => Ok(default_value(self.dialect, &text)),
            None => self.literal(expr).map(DefaultValue::Literal),
        }
    }

    /// A column type: `bigint`, `varchar(255)`, `enum("a","b")`, `enum.name` or `sql("…")`.
    pub fn data_type(&self, table_schema: &str, expr: &Expression) -> Result<DataType, ReadError> {
        let text = match expr {
            Expression::Variable(v) => v.as_str().to_owned(),
            Expression::String(s) => s.value().clone(),
            Expression::Traversal(_) => {
                let path = self.reference(expr)?;
                return match path.as_slice() {
                    [kind, name] if kind == "enum" => self.enum_by_name(table_schema, name, expr),
                    _ => Err(self.invalid(expr.span(), "expected a type".to_owned())),
                };
            }
            Expression::FuncCall(f) if f.name.namespace.is_empty() => match self.sql_call(expr)? {
                Some(text) => text,
                None => {
                    let mut args = Vec::new();
                    for a in f.args.iter() {
                        args.push(match a {
                            Expression::String(s) => {
                                format!("'{}'", s.value().replace('\\', "\\\\").replace('\'', "''"))
                            }
                            other => self.number_text(other).ok_or_else(|| {
                                self.invalid(other.span(), "expected a number or string".to_owned())
                            })?,
                        });
                    }
                    format!("{}({})", f.name.name.as_str(), args.join(","))
                }
            },
            _ => return Err(self.invalid(expr.span(), "expected a type".to_owned())),
        };
        let enums = &self.schema.enums;
        let resolve = |schema: Option<&str>, name: &str| {
            let q = QualifiedName::new(schema.unwrap_or(table_schema), name);
            enums.contains_key(&q).then_some(q)
        };
        parse_type_with(self.dialect, &text, &resolve).map_err(|e| self.invalid(expr.span(), e.to_string()))
    }

    fn enum_by_name(&self, table_schema: &str, name: &str, expr: &Expression) -> Result<DataType, ReadError> {
        let local = QualifiedName::new(table_schema, name);
        if self.schema.enums.contains_key(&local) {
            return Ok(DataType::Enum(local));
        }
        let mut found = self.schema.enums.keys().filter(|q| q.name == name);
        match (found.next(), found.next()) {
            (Some(q), None) => Ok(DataType::Enum(q.clone())),
            (Some(_), Some(_)) => Err(self.invalid(
                expr.span(),
                format!("enum.{name} is ambiguous; use sql(\"schema.{name}\")"),
            )),
            (None, _) => Err(ReadError::BadReference {
                at: self.at(expr.span()),
                what: format!("enum {name}"),
            }),
        }
    }
}
