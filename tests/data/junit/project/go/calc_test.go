package calc

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestAdd(t *testing.T) {
	if got := Add(2, 2); got != 4 {
		t.Fatalf("Add(2, 2) = %d, want 4", got)
	}
}

func TestDivByZero(t *testing.T) {
	if got := Div(1, 0); got != 0 {
		t.Fatalf("Div(1, 0) = %d, want 0", got)
	}
}

// TestAlwaysFails fails on every attempt.
func TestAlwaysFails(t *testing.T) {
	if got := Add(2, 2); got != 5 {
		t.Errorf("Add(2, 2) = %d, want 5", got)
	}
}

// TestFlaky fails on its first attempt and passes afterwards. The attempt
// counter lives in $FLAKY_COUNTER_DIR (a temp dir) so the tree stays clean.
func TestFlaky(t *testing.T) {
	dir := os.Getenv("FLAKY_COUNTER_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	path := filepath.Join(dir, "agentgate_go_flaky_counter")
	n := 0
	if b, err := os.ReadFile(path); err == nil {
		n, _ = strconv.Atoi(string(b))
	}
	n++
	_ = os.WriteFile(path, []byte(strconv.Itoa(n)), 0o644)
	if n < 2 {
		t.Fatalf("attempt %d failed", n)
	}
}

func TestSkipped(t *testing.T) {
	t.Skip("not implemented yet")
}

func TestTable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		a, b, w int
	}{{"two", 4, 2, 2}, {"three", 9, 3, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Div(tc.a, tc.b); got != tc.w {
				t.Errorf("Div(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.w)
			}
		})
	}
}
