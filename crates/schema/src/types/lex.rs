//! Splits a type's text into words, one parameter list and array suffixes.

use super::{Parsed, TypeError};

/// One word of a type name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The word as it takes part in the canonical name: lowercased unless quoted, quotes kept.
    pub text: String,
    /// The identifier's value (quotes removed).
    pub value: String,
    /// The schema, for `schema.name`.
    pub schema: Option<String>,
    /// Whether the word was a quoted identifier.
    pub quoted: bool,
}

impl Part {
    /// The canonical text of the word.
    pub fn text(&self) -> &str {
        &self.text
    }
}

fn syntax(text: &str, reason: &str) -> TypeError {
    TypeError::Syntax {
        text: text.to_owned(),
        reason: reason.to_owned(),
    }
}

/// Reads a quoted run starting after the opening `quote`; returns the value and the raw text.
fn quoted(
    text: &str,
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
    quote: char,
    backslash: bool,
) -> Result<String, TypeError> {
    let mut value = String::new();
    loop {
        match chars.next() {
            None => return Err(syntax(text, "unterminated quote")),
            Some((_, '\\')) if backslash => match chars.next() {
                Some((_, c)) => value.push(match c {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '0' => '\0',
                    other => other,
                }),
                None => return Err(syntax(text, "unterminated quote")),
            },
            Some((_, c)) if c == quote => {
                if chars.peek().is_some_and(|&(_, n)| n == quote) {
                    chars.next();
                    value.push(quote);
                } else {
                    return Ok(value);
                }
            }
            Some((_, c)) => value.push(c),
        }
    }
}

fn params(
    text: &str,
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
) -> Result<Vec<String>, TypeError> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut was_string = false;
    loop {
        match chars.next() {
            None => return Err(syntax(text, "unbalanced parentheses")),
            Some((_, '\'')) => {
                if was_string || !current.trim().is_empty() {
                    return Err(syntax(text, "text before a quoted parameter"));
                }
                current.clear();
                current.push_str(&quoted(text, chars, '\'', true)?);
                was_string = true;
            }
            Some((_, c @ (',' | ')'))) => {
                let item = if was_string {
                    std::mem::take(&mut current)
                } else {
                    std::mem::take(&mut current).trim().to_owned()
                };
                if item.is_empty() && !was_string {
                    if c == ')' && out.is_empty() {
                        return Ok(out);
                    }
                    return Err(syntax(text, "empty parameter"));
                }
                out.push(item);
                was_string = false;
                if c == ')' {
                    return Ok(out);
                }
            }
            Some((_, '(')) => return Err(syntax(text, "nested parentheses")),
            Some((_, c)) if was_string && !c.is_whitespace() => {
                return Err(syntax(text, "text after a quoted parameter"));
            }
            Some((_, c)) if was_string => {
                let _ = c;
            }
            Some((_, c)) => current.push(c),
        }
    }
}

/// Lexes a type.
pub fn lex(text: &str) -> Result<Parsed, TypeError> {
    let mut words: Vec<Part> = Vec::new();
    let mut params_out: Option<Vec<String>> = None;
    let mut had_params = false;
    let mut array_dims = 0;
    let mut pending_dot = false;
    let mut chars = text.char_indices().peekable();
    while let Some(&(_, c)) = chars.peek() {
        let part = match c {
            c if c.is_whitespace() => {
                chars.next();
                continue;
            }
            '"' | '`' => {
                chars.next();
                let value = quoted(text, &mut chars, c, false)?;
                Part {
                    text: format!("{c}{}{c}", value.replace(c, &format!("{c}{c}"))),
                    value,
                    schema: None,
                    quoted: true,
                }
            }
            c if c.is_alphanumeric() || c == '_' || c == '$' => {
                let mut word = String::new();
                while let Some(&(_, c)) = chars.peek() {
                    if c.is_alphanumeric() || c == '_' || c == '$' {
                        word.push(c.to_ascii_lowercase());
                        chars.next();
                    } else {
                        break;
                    }
                }
                Part {
                    text: word.clone(),
                    value: word,
                    schema: None,
                    quoted: false,
                }
            }
            '.' => {
                chars.next();
                if pending_dot || words.last().is_none_or(|w| w.schema.is_some()) {
                    return Err(syntax(text, "misplaced `.`"));
                }
                pending_dot = true;
                continue;
            }
            '(' => {
                chars.next();
                if had_params || words.is_empty() || array_dims > 0 {
                    return Err(syntax(text, "unexpected `(`"));
                }
                had_params = true;
                let list = params(text, &mut chars)?;
                // `blob()` is `blob`: the model has one spelling for both, so an empty list that
                // made the type unknown would render as the bare name and read back as another.
                params_out = (!list.is_empty()).then_some(list);
                continue;
            }
            '[' => {
                chars.next();
                while chars.peek().is_some_and(|&(_, d)| d.is_ascii_digit()) {
                    chars.next();
                }
                if chars.next().map(|(_, c)| c) != Some(']') || words.is_empty() {
                    return Err(syntax(text, "bad array suffix"));
                }
                array_dims += 1;
                continue;
            }
            _ => return Err(syntax(text, &format!("unexpected {c:?}"))),
        };
        if array_dims > 0 {
            return Err(syntax(text, "words after an array suffix"));
        }
        if pending_dot {
            pending_dot = false;
            let Some(schema) = words.pop() else {
                return Err(syntax(text, "misplaced `.`"));
            };
            words.push(Part {
                text: format!("{}.{}", schema.text, part.text),
                value: part.value,
                schema: Some(schema.value),
                quoted: true,
            });
        } else {
            words.push(part);
        }
    }
    if pending_dot {
        return Err(syntax(text, "trailing `.`"));
    }
    Ok(Parsed {
        words,
        params: params_out,
        array_dims,
    })
}
