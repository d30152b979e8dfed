//! The dump statements sqlparser cannot parse, read from their tokens: `ALTER SEQUENCE … OWNED
//! BY …` and an identity added with its sequence's options, plus the token helpers the rules share.

use sqlparser::ast::{Ident, ObjectName, ObjectNamePart};
use sqlparser::tokenizer::Token;

use crate::model::{Identity, SequenceOptions};

use super::Rule;

/// `ALTER SEQUENCE <name> OWNED BY <table>.<column>` (pg_dump writes it for every serial column).
pub(super) fn owned_by(tokens: &[Token]) -> Option<Rule> {
    let mut c = Cursor { tokens, i: 2 };
    let sequence = c.name()?;
    c.keyword("OWNED")?;
    c.keyword("BY")?;
    let mut target = c.name()?;
    c.end()?;
    let column = match target.0.pop()? {
        ObjectNamePart::Identifier(ident) => ident,
        _ => return None,
    };
    Some(Rule::OwnedBy {
        sequence,
        table: target,
        column,
    })
}

/// `ALTER TABLE [ONLY] t ALTER COLUMN c ADD GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY [(…)]`,
/// with its sequence's options as written (its sequence name is PostgreSQL's business).
pub(super) fn add_identity(tokens: &[Token]) -> Option<Rule> {
    let mut c = Cursor { tokens, i: 2 };
    let _ = c.keyword("ONLY");
    let table = c.name()?;
    c.keyword("ALTER")?;
    let _ = c.keyword("COLUMN");
    let column = c.ident()?;
    c.keyword("ADD")?;
    c.keyword("GENERATED")?;
    let identity = if c.keyword("ALWAYS").is_some() {
        Identity::Always
    } else {
        c.keyword("BY")?;
        c.keyword("DEFAULT")?;
        Identity::ByDefault
    };
    c.keyword("AS")?;
    c.keyword("IDENTITY")?;
    let mut options = SequenceOptions::default();
    if c.token(&Token::LParen).is_some() {
        while c.token(&Token::RParen).is_none() {
            c.sequence_option(&mut options)?;
        }
    }
    c.end()?;
    Some(Rule::AddIdentity {
        table,
        column,
        identity,
        options,
    })
}

/// A cursor over a statement's tokens for the hand-read forms.
struct Cursor<'a> {
    tokens: &'a [Token],
    i: usize,
}

impl Cursor<'_> {
    fn next(&mut self) -> Option<&Token> {
        let t = self.tokens.get(self.i)?;
        self.i += 1;
        Some(t)
    }

    fn keyword(&mut self, kw: &str) -> Option<()> {
        (self.tokens.get(self.i).and_then(word).as_deref() == Some(kw)).then(|| self.i += 1)
    }

    fn token(&mut self, t: &Token) -> Option<()> {
        (self.tokens.get(self.i) == Some(t)).then(|| self.i += 1)
    }

    /// A whole number, possibly negative.
    fn integer(&mut self) -> Option<i64> {
        let negative = self.token(&Token::Minus).is_some();
        match self.next()? {
            Token::Number(v, _) => v.parse::<i64>().ok().map(|n| if negative { -n } else { n }),
            _ => None,
        }
    }

    fn ident(&mut self) -> Option<Ident> {
        match self.next()? {
            Token::Word(w) => Some(Ident {
                value: w.value.clone(),
                quote_style: w.quote_style,
                span: sqlparser::tokenizer::Span::empty(),
            }),
            _ => None,
        }
    }

    fn name(&mut self) -> Option<ObjectName> {
        let mut parts = vec![ObjectNamePart::Identifier(self.ident()?)];
        while self.token(&Token::Period).is_some() {
            parts.push(ObjectNamePart::Identifier(self.ident()?));
        }
        Some(ObjectName(parts))
    }

    fn end(&self) -> Option<()> {
        (self.i == self.tokens.len()).then_some(())
    }

    /// One option of an identity's sequence, as pg_dump writes them.
    fn sequence_option(&mut self, o: &mut SequenceOptions) -> Option<()> {
        match word(self.next()?)?.as_str() {
            "SEQUENCE" => {
                self.keyword("NAME")?;
                self.name().map(drop)
            }
            "START" => {
                let _ = self.keyword("WITH");
                o.start = Some(self.integer()?);
                Some(())
            }
            "INCREMENT" => {
                let _ = self.keyword("BY");
                o.increment = Some(self.integer()?);
                Some(())
            }
            "CACHE" => {
                o.cache = Some(self.integer()?);
                Some(())
            }
            "MINVALUE" => {
                o.min = Some(self.integer()?);
                Some(())
            }
            "MAXVALUE" => {
                o.max = Some(self.integer()?);
                Some(())
            }
            "CYCLE" => {
                o.cycle = true;
                Some(())
            }
            "NO" => match word(self.next()?)?.as_str() {
                "MINVALUE" | "MAXVALUE" => Some(()),
                "CYCLE" => {
                    o.cycle = false;
                    Some(())
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// An unquoted word, uppercase (keywords and plain names); `None` for anything else.
pub(super) fn word(t: &Token) -> Option<String> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    }
}

/// A name as written: unquoted words lowercase (PostgreSQL folds them), quoted ones verbatim.
pub(super) fn ident_text(t: &Token) -> Option<String> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_lowercase()),
        Token::Word(w) => Some(w.value.clone()),
        _ => None,
    }
}

/// A setting's value or a name as text: strings unquoted, words as written.
pub(super) fn value_text(t: &Token) -> Option<String> {
    match t {
        Token::SingleQuotedString(s) => Some(s.clone()),
        Token::Word(w) if w.quote_style == Some('"') => Some(format!("\"{}\"", w.value)),
        Token::Word(w) => Some(w.value.clone()),
        Token::Number(n, _) => Some(n.clone()),
        _ => None,
    }
}
