pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 2), 4);
    }

    #[test]
    fn always_fails() {
        assert_eq!(add(2, 2), 5, "2 + 2 should be 5");
    }

    /// Fails on its first attempt only (nextest sets NEXTEST_ATTEMPT; plain cargo test
    /// has no retries, so there it always fails).
    #[test]
    fn flaky() {
        let attempt: u32 = std::env::var("NEXTEST_ATTEMPT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        assert!(attempt >= 2, "attempt {attempt} failed");
    }

    #[test]
    #[ignore = "not implemented yet"]
    fn ignored() {}
}
