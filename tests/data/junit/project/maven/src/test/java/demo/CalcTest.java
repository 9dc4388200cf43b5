package demo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

class CalcTest {
    // Surefire reruns failing tests in the same JVM, so a static counter is enough.
    private static final AtomicInteger FLAKY_ATTEMPTS = new AtomicInteger();

    @Test
    void addsNumbers() {
        assertEquals(4, Calc.add(2, 2));
    }

    @Test
    void flakyPassesOnSecondAttempt() {
        int attempt = FLAKY_ATTEMPTS.incrementAndGet();
        assertEquals(2, attempt, "attempt " + attempt + " failed");
    }

    @Test
    void alwaysFails() {
        assertEquals(5, Calc.add(2, 2), "2 + 2 should be 5");
    }

    @Test
    @Disabled("not implemented yet")
    void skipped() {
    }
}
