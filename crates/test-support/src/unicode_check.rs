//! A check for tests: does a regex pattern need one of `regex`'s Unicode tables, which the
//! rules avoid (see the doc of `plugboard_base::regex_rules`)?

/// Panics if `pattern` needs one of `regex`'s Unicode tables.
pub fn assert_needs_no_unicode_tables(pattern: &str) {
    if let Some(what) = unicode_tables_needed(pattern) {
        panic!("`{pattern}` needs Unicode tables ({what}): see plugboard_base::regex_rules");
    }
}

/// What in `pattern` needs Unicode tables: case folding, a Perl class or a word boundary
/// in Unicode mode, or any `\p{…}`.
pub fn unicode_tables_needed(pattern: &str) -> Option<&'static str> {
    use regex_syntax::ast::{self, Ast, ClassSetItem, Flag, FlagsItemKind, GroupKind};

    #[derive(Clone, Copy)]
    struct Mode {
        case_insensitive: bool,
        unicode: bool,
    }
    struct Check {
        modes: Vec<Mode>,
    }
    impl Check {
        fn mode(&mut self) -> &mut Mode {
            self.modes.last_mut().expect("the outermost mode stays")
        }
        fn apply(&mut self, flags: &ast::Flags) {
            let mut on = true;
            for item in &flags.items {
                match item.kind {
                    FlagsItemKind::Negation => on = false,
                    FlagsItemKind::Flag(Flag::CaseInsensitive) => self.mode().case_insensitive = on,
                    FlagsItemKind::Flag(Flag::Unicode) => self.mode().unicode = on,
                    FlagsItemKind::Flag(_) => {}
                }
            }
        }
    }
    impl ast::Visitor for Check {
        type Output = ();
        type Err = &'static str;
        fn finish(self) -> Result<(), &'static str> {
            Ok(())
        }
        fn visit_pre(&mut self, node: &Ast) -> Result<(), &'static str> {
            let mode = *self.mode();
            match node {
                Ast::Group(group) => {
                    self.modes.push(mode);
                    if let GroupKind::NonCapturing(flags) = &group.kind {
                        self.apply(flags);
                    }
                }
                Ast::Flags(set) => self.apply(&set.flags),
                Ast::ClassUnicode(_) => return Err("a \\p class"),
                Ast::ClassPerl(_) if mode.unicode => return Err("a Unicode Perl class"),
                Ast::Assertion(assertion)
                    if mode.unicode
                        && !matches!(
                            assertion.kind,
                            ast::AssertionKind::StartLine
                                | ast::AssertionKind::EndLine
                                | ast::AssertionKind::StartText
                                | ast::AssertionKind::EndText
                        ) =>
                {
                    return Err("a Unicode word boundary");
                }
                Ast::Literal(_) | Ast::ClassBracketed(_) | Ast::ClassPerl(_)
                    if mode.case_insensitive && mode.unicode =>
                {
                    return Err("Unicode case folding");
                }
                _ => {}
            }
            Ok(())
        }
        fn visit_post(&mut self, node: &Ast) -> Result<(), &'static str> {
            if let Ast::Group(_) = node {
                self.modes.pop();
            }
            Ok(())
        }
        fn visit_class_set_item_pre(&mut self, item: &ClassSetItem) -> Result<(), &'static str> {
            match item {
                ClassSetItem::Unicode(_) => Err("a \\p class"),
                ClassSetItem::Perl(_) if self.mode().unicode => Err("a Unicode Perl class"),
                _ => Ok(()),
            }
        }
    }

    let parsed = ast::parse::Parser::new()
        .parse(pattern)
        .unwrap_or_else(|e| panic!("`{pattern}` does not parse: {e}"));
    let check = Check {
        modes: vec![Mode {
            case_insensitive: false,
            unicode: true,
        }],
    };
    ast::visit(&parsed, check).err()
}
