//! HTML output of user- and executor-supplied text.
//!
//! `trigger_msg` and `handle_msg` legitimately carry a little HTML (`<br>`, coloured `<span>` banners) that
//! the admin itself writes; everything else in them (executor messages, job parameters, addresses) is
//! untrusted. [`sanitize_message`] keeps exactly the admin's own markup and escapes the rest.

/// Escapes the five HTML-significant characters.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

/// Tags the admin writes into messages; matched literally, case-sensitively.
const ALLOWED_TAGS: [&str; 5] =
    ["<br>", "<br/>", "</span>", "<span style=\"color:#00c0ef;\" >", "<span style=\"color:#F39C12;\" >"];

/// Escapes a stored message except for the admin's own line breaks and banner spans; unbalanced
/// `</span>` tags are escaped too, so the result never closes markup it did not open.
pub fn sanitize_message(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut open_spans = 0usize;
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(tag) = ALLOWED_TAGS.iter().find(|tag| rest.starts_with(**tag)) {
            let keep = match *tag {
                "</span>" if open_spans == 0 => false,
                "</span>" => {
                    open_spans -= 1;
                    true
                }
                t if t.starts_with("<span") => {
                    open_spans += 1;
                    true
                }
                _ => true,
            };
            if keep {
                out.push_str(tag);
            } else {
                out.push_str(&escape(tag));
            }
            rest = &rest[tag.len()..];
        } else {
            let ch = rest.chars().next().unwrap_or_default();
            out.push_str(&escape(ch.encode_utf8(&mut [0; 4])));
            rest = &rest[ch.len_utf8()..];
        }
    }
    for _ in 0..open_spans {
        out.push_str("</span>");
    }
    out
}

/// A stored message as plain text for channels that are not HTML: the admin's line breaks become `\n`,
/// its banner spans vanish, everything else stays as it is (each channel escapes it for its own syntax).
pub fn message_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(tag) = ALLOWED_TAGS.iter().find(|tag| rest.starts_with(**tag)) {
            if tag.starts_with("<br") {
                out.push('\n');
            }
            rest = &rest[tag.len()..];
        } else {
            let ch = rest.chars().next().unwrap_or_default();
            out.push(ch);
            rest = &rest[ch.len_utf8()..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_the_five_characters() {
        assert_eq!(escape(r#"<a href="x">'&'</a>"#), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    }

    #[test]
    fn admin_markup_survives_and_anything_else_is_escaped() {
        let msg = "Trigger：<br>msg：<script>alert(1)</script><br><br><span style=\"color:#00c0ef;\" > >>>run<<< </span><br>";
        let clean = sanitize_message(msg);
        assert!(clean.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(clean
            .contains("<br><br><span style=\"color:#00c0ef;\" > &gt;&gt;&gt;run&lt;&lt;&lt; </span><br>"));
        assert!(!clean.contains("<script"));
    }

    #[test]
    fn plain_text_keeps_line_breaks_and_drops_banners() {
        let msg = "Trigger：<br><span style=\"color:#00c0ef;\" > >>>run<<< </span><br>msg <b>x</b><br/>end";
        assert_eq!(message_text(msg), "Trigger：\n >>>run<<< \nmsg <b>x</b>\nend");
    }

    #[test]
    fn lookalike_tags_and_unbalanced_spans_are_escaped() {
        assert_eq!(
            sanitize_message("<span style=\"color:red\" onmouseover=x>"),
            "&lt;span style=&quot;color:red&quot; onmouseover=x&gt;"
        );
        assert_eq!(sanitize_message("</span><b>"), "&lt;/span&gt;&lt;b&gt;");
        assert_eq!(
            sanitize_message("<span style=\"color:#F39C12;\" >x"),
            "<span style=\"color:#F39C12;\" >x</span>"
        );
        assert_eq!(sanitize_message("<BR>"), "&lt;BR&gt;");
    }
}
