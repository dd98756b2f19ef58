//! The length of a JSON value as compact text, counted as it is written out: for records and
//! limits that need a size, not the text.

use serde_json::Value;

/// The length of `value` as compact JSON, counted without building the text.
pub fn json_size(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_what_would_be_written() {
        let value = serde_json::json!({"content": [{"type": "text", "text": "hé \"x\""}], "n": 1});
        assert_eq!(json_size(&value), serde_json::to_vec(&value).unwrap().len());
        assert_eq!(json_size(&Value::Null), 4);
    }
}
