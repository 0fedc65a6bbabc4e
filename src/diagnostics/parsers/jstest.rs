//! JavaScript test runners: jest, vitest and `bun test`.

use std::ops::Range;

use super::{Grammar, Out};

#[derive(Debug, Default)]
pub struct JsTest {}

impl Grammar for JsTest {
    fn name(&self) -> &'static str {
        "jest"
    }

    fn wants(&self, _line: &[u8]) -> bool {
        false
    }

    fn line(&mut self, _line: &str, _at: &Range<u64>, _out: &mut Out) {}
}
