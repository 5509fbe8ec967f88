//! The tree builder as html5gum's `Emitter`: tokens go straight into the tree.

use html5gum::{naive_next_state, Emitter, Error, State};

use super::builder::Builder;

/// The builder is html5gum's emitter: tokens go straight into the tree, no token objects, no parse-error
/// reporting (its per-byte validation is a large share of tokenizing time and the extractor ignores errors).
impl Emitter for &mut Builder {
    /// No tokens: everything goes into the tree as it is read.
    type Token = ();

    fn set_last_start_tag(&mut self, last_start_tag: Option<&[u8]>) {
        self.last_start_tag.clear();
        self.last_start_tag
            .extend_from_slice(last_start_tag.unwrap_or_default());
    }

    fn emit_eof(&mut self) {}

    fn emit_error(&mut self, _error: Error) {}

    fn should_emit_errors(&mut self) -> bool {
        false
    }

    fn pop_token(&mut self) -> Option<()> {
        None
    }

    fn emit_string(&mut self, c: &[u8]) {
        self.string(c);
    }

    fn init_start_tag(&mut self) {
        self.tag.clear();
        self.attrs.clear();
        self.attr_name.clear();
        self.is_end_tag = false;
        self.self_closing = false;
    }

    fn init_end_tag(&mut self) {
        self.tag.clear();
        self.attr_name.clear();
        self.is_end_tag = true;
        self.self_closing = false;
    }

    fn init_comment(&mut self) {}

    fn emit_current_tag(&mut self) -> Option<State> {
        if self.is_end_tag {
            self.attr_name.clear();
            let name = std::mem::take(&mut self.tag);
            self.end_tag(&name);
            self.tag = name;
            return None;
        }
        self.flush_attribute();
        self.last_start_tag.clear();
        self.last_start_tag.extend_from_slice(&self.tag);
        self.start_tag(self.self_closing);
        // `<noscript>` is markup to a reader without scripts (and to lxml, which trafilatura and readability
        // read pages with): a fallback copy of an article rendered by script is there, not in the script
        match self.last_start_tag.as_slice() {
            b"noscript" => None,
            name => naive_next_state(name),
        }
    }

    fn emit_current_comment(&mut self) {}

    fn emit_current_doctype(&mut self) {}

    fn set_self_closing(&mut self) {
        self.self_closing = true;
    }

    fn set_force_quirks(&mut self) {}

    fn push_tag_name(&mut self, s: &[u8]) {
        self.tag.extend_from_slice(s);
    }

    fn push_comment(&mut self, _s: &[u8]) {}

    fn push_doctype_name(&mut self, _s: &[u8]) {}

    fn init_doctype(&mut self) {}

    fn init_attribute(&mut self) {
        if !self.is_end_tag {
            self.flush_attribute();
        }
        self.attr_name.clear();
        self.attr_value.clear();
    }

    fn push_attribute_name(&mut self, s: &[u8]) {
        if !self.is_end_tag {
            self.attr_name.extend_from_slice(s);
        }
    }

    fn push_attribute_value(&mut self, s: &[u8]) {
        if !self.is_end_tag {
            self.attr_value.extend_from_slice(s);
        }
    }

    fn set_doctype_public_identifier(&mut self, _value: &[u8]) {}

    fn set_doctype_system_identifier(&mut self, _value: &[u8]) {}

    fn push_doctype_public_identifier(&mut self, _s: &[u8]) {}

    fn push_doctype_system_identifier(&mut self, _s: &[u8]) {}

    fn current_is_appropriate_end_tag_token(&mut self) -> bool {
        self.is_end_tag && !self.last_start_tag.is_empty() && self.last_start_tag == self.tag
    }
}
