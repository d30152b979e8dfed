//! The database server's error for a failed Apply statement, as the frame may carry it: the
//! SQLSTATE and the server's message with every quoted span removed.
//!
//! Without it a failed Apply said only "a statement failed", and nobody could tell a lock
//! timeout from a syntax error without the database's own log. The message stays free of SQL
//! values: servers quote the values they name (`invalid input syntax for type integer: "x"`,
//! `Duplicate entry 'x' for key …`), so every quoted span becomes `?` (identifiers too, since
//! MySQL quotes both alike), and the redactor still runs over what is left.

/// At most this many bytes of the server's message.
const MAX_SERVER_MESSAGE_BYTES: usize = 512;

/// The SQLSTATE and the unquoted message of `error`, the executor's text of a server error:
/// `<message> (SQLSTATE XXXXX)` from PostgreSQL, `ERROR <code> (XXXXX): <message>` from MySQL;
/// anything else (a broken connection) is the message alone.
pub(super) fn server_error(error: &str) -> (Option<String>, String) {
    let (state, message) = if let Some((message, rest)) = error.rsplit_once(" (SQLSTATE ") {
        (sqlstate(rest.strip_suffix(')').unwrap_or(rest)), message)
    } else if let Some(rest) = error.strip_prefix("ERROR ")
        && let Some((head, message)) = rest.split_once("): ")
        && let Some((_, state)) = head.split_once(" (")
    {
        (sqlstate(state), message)
    } else {
        (None, error)
    };
    let mut out = String::with_capacity(message.len());
    let mut quote: Option<char> = None;
    for c in message.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if matches!(c, '\'' | '"' | '`') => {
                quote = Some(c);
                out.push('?');
            }
            None if c.is_control() => out.push(' '),
            None => out.push(c),
        }
    }
    let mut cut = out.len().min(MAX_SERVER_MESSAGE_BYTES);
    while !out.is_char_boundary(cut) {
        cut -= 1;
    }
    out.truncate(cut);
    (state, out.trim().to_owned())
}

/// Five ASCII letters or digits, or nothing.
fn sqlstate(s: &str) -> Option<String> {
    (s.len() == 5 && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())).then(|| s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::server_error;

    #[test]
    fn postgresql_keeps_the_sqlstate_and_drops_quoted_values() {
        let (state, message) = server_error("canceling statement due to lock timeout (SQLSTATE 55P03)");
        assert_eq!(state.as_deref(), Some("55P03"));
        assert_eq!(message, "canceling statement due to lock timeout");
        let (state, message) =
            server_error("invalid input syntax for type integer: \"s3cret-value\" (SQLSTATE 22P02)");
        assert_eq!(state.as_deref(), Some("22P02"));
        assert_eq!(message, "invalid input syntax for type integer: ?");
    }

    #[test]
    fn mysql_keeps_the_sqlstate_and_drops_quoted_values() {
        let (state, message) =
            server_error("ERROR 1062 (23000): Duplicate entry 's3cret-value' for key 'PRIMARY'");
        assert_eq!(state.as_deref(), Some("23000"));
        assert_eq!(message, "Duplicate entry ? for key ?");
        let (state, message) =
            server_error("ERROR 1205 (HY000): Lock wait timeout exceeded; try restarting transaction");
        assert_eq!(state.as_deref(), Some("HY000"));
        assert_eq!(message, "Lock wait timeout exceeded; try restarting transaction");
    }

    #[test]
    fn anything_else_is_the_message_alone_bounded() {
        let (state, message) = server_error("connection closed\n`x");
        assert_eq!(state, None);
        assert_eq!(message, "connection closed ?");
        let (_, long) = server_error(&"é".repeat(1000));
        assert!(long.len() <= super::MAX_SERVER_MESSAGE_BYTES);
    }
}
