//! MySQL `CREATE TABLE … PARTITION BY …`, as `mysqldump` writes it (the clause in a `/*!50100 …
//! */` comment): the table is read as any other, and the clause into the canonical text of
//! [`MysqlPartitioning`] (`Table::partition_by`). `RANGE`, `LIST` (both with `COLUMNS`), `[LINEAR]
//! HASH` and `[LINEAR] KEY`, with `PARTITIONS n` or a list of partitions whose only options are
//! `VALUES …` and `ENGINE`; sub-partitions and other partition options are refused by name.

use sqlparser::tokenizer::Token;

use crate::normalize::MysqlPartitioning;

use super::super::super::{Location, ReadError};
use super::super::Reader;
use super::lex::{Cursor, blank_conditionals};

impl Reader {
    /// A `CREATE TABLE` whose definition is followed by `PARTITION BY`.
    pub(in super::super) fn mysql_partitioned_table(
        &mut self,
        text: &str,
        at: Location,
    ) -> Result<(), ReadError> {
        let code = blank_conditionals(text);
        let mut c = self.cursor(&code)?;
        let Some(by) = partition_by(&c) else {
            return Err(self.unsupported(&at, "PARTITION BY"));
        };
        // The table itself, read as every table is.
        self.piece(&code[..c.offset_before(by)], at.clone())?;
        while c.word_at().0.as_deref().is_some_and(|w| w != "TABLE") {
            c.i += 1;
        }
        c.i += 1;
        let _ = c.if_not_exists();
        let (name, _) = self.name(&mut c, &at)?;
        c.i = by + 2;
        let clause = self.partition_clause(&mut c)?;
        let table = self.table_mut(&name, &at)?;
        table.partition_by = Some(clause.text());
        Ok(())
    }

    fn partition_clause(&self, c: &mut Cursor<'_>) -> Result<MysqlPartitioning, ReadError> {
        let mut method = Vec::new();
        while let (Some(w), _) = c.word_at() {
            match w.as_str() {
                "LINEAR" | "RANGE" | "LIST" | "HASH" | "KEY" | "COLUMNS" => method.push(w),
                "ALGORITHM" => {
                    let (_, loc) = c.word_at();
                    return Err(self.unsupported(&self.at(loc), "PARTITION BY KEY ALGORITHM"));
                }
                _ => break,
            }
            c.i += 1;
        }
        let (_, loc) = c.word_at();
        let expression = self.parenthesised(c)?;
        let method = method.join(" ");
        if method.is_empty() {
            return Err(self.unsupported(&self.at(loc), "a partitioning method"));
        }
        let mut partitions = Vec::new();
        if c.word_at().0.as_deref() == Some("PARTITIONS") {
            c.i += 1;
            let n = match c.peek() {
                Some(Token::Number(n, _)) => n.parse::<usize>().ok(),
                _ => None,
            }
            .ok_or_else(|| self.unsupported(&self.at(loc), "PARTITIONS without a number"))?;
            c.i += 1;
            partitions = (0..n).map(|i| (format!("p{i}"), None)).collect();
        }
        if let (Some(w), loc) = c.word_at()
            && w == "SUBPARTITION"
        {
            return Err(self.unsupported(&self.at(loc), "SUBPARTITION BY (sub-partitions are not modelled)"));
        }
        if c.token(&Token::LParen).is_some() {
            partitions.clear();
            loop {
                partitions.push(self.partition_definition(c)?);
                if c.token(&Token::Comma).is_none() {
                    break;
                }
            }
            if c.token(&Token::RParen).is_none() {
                let (_, loc) = c.word_at();
                return Err(self.unsupported(&self.at(loc), "a partition definition"));
            }
        }
        if c.peek().is_some() {
            let (_, loc) = c.word_at();
            return Err(self.unsupported(&self.at(loc), "what follows the partitions"));
        }
        Ok(MysqlPartitioning {
            method,
            expression,
            partitions,
        })
    }

    /// `PARTITION name [VALUES LESS THAN (…) | MAXVALUE | VALUES IN (…)] [[STORAGE] ENGINE [=] e]`.
    fn partition_definition(&self, c: &mut Cursor<'_>) -> Result<(String, Option<String>), ReadError> {
        let (word, loc) = c.word_at();
        if word.as_deref() != Some("PARTITION") {
            return Err(self.unsupported(&self.at(loc), "a partition definition"));
        }
        c.i += 1;
        let name = match c.peek() {
            Some(Token::Word(w)) => w.value.clone(),
            _ => return Err(self.unsupported(&self.at(loc), "a partition without a name")),
        };
        c.i += 1;
        let mut values = None;
        if c.word_at().0.as_deref() == Some("VALUES") {
            c.i += 1;
            match c.word_at().0.as_deref() {
                Some("LESS") => {
                    c.i += 2;
                    if c.word_at().0.as_deref() == Some("MAXVALUE") {
                        c.i += 1;
                        values = Some("MAXVALUE".to_owned());
                    } else {
                        values = Some(self.parenthesised(c)?);
                    }
                }
                Some("IN") => {
                    c.i += 1;
                    values = Some(self.parenthesised(c)?);
                }
                _ => return Err(self.unsupported(&self.at(loc), "partition VALUES")),
            }
        }
        loop {
            match c.word_at() {
                (Some(w), _) if w == "STORAGE" => c.i += 1,
                (Some(w), _) if w == "ENGINE" => {
                    c.i += 1;
                    let _ = c.token(&Token::Eq);
                    c.i += 1;
                }
                (Some(w), loc) if w != "PARTITION" => {
                    return Err(self.unsupported(&self.at(loc), format!("partition option {w}")));
                }
                _ => break,
            }
        }
        Ok((name, values))
    }

    /// The text between a `(` and its `)`.
    fn parenthesised(&self, c: &mut Cursor<'_>) -> Result<String, ReadError> {
        let (_, loc) = c.word_at();
        let open = c.i;
        if c.token(&Token::LParen).is_none() {
            return Err(self.unsupported(&self.at(loc), "a parenthesised list"));
        }
        let mut depth = 1usize;
        while let Some(t) = c.peek() {
            match t {
                Token::LParen => depth += 1,
                Token::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        let text = c.code[c.offset_after(open)..c.offset_before(c.i)].to_owned();
                        c.i += 1;
                        return Ok(text);
                    }
                }
                _ => {}
            }
            c.i += 1;
        }
        Err(self.unsupported(&self.at(loc), "an unclosed parenthesis"))
    }
}

/// The index of the `PARTITION` of a top-level `PARTITION BY`.
fn partition_by(c: &Cursor<'_>) -> Option<usize> {
    let mut depth = 0usize;
    let word = |k: usize| match c.tokens.get(k).map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    };
    for (k, t) in c.tokens.iter().enumerate() {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && word(k).as_deref() == Some("PARTITION") && word(k + 1).as_deref() == Some("BY") {
            return Some(k);
        }
    }
    None
}
