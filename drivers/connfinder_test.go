package drivers

import "testing"

func TestSameAddr(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"127.0.0.1:5432", "127.0.0.1:5432", true},
		{"[::1]:5432", "::1:5432", true},
		{"[::1]:5432", "[::1]:5433", false},
		{"127.0.0.1:5432", "[::1]:5432", false},
		{"[::ffff:127.0.0.1]:80", "127.0.0.1:80", true},
		{"localhost", "localhost", true},
		{"localhost", "127.0.0.1:1", false},
	} {
		if got := SameAddr(tc.a, tc.b); got != tc.want {
			t.Errorf("SameAddr(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
