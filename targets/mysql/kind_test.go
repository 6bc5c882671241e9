package mysql

import "testing"

// TestSniffGreeting: the handshake a MariaDB server sends first names it,
// as Sniff reports it; other bytes do not.
func TestSniffGreeting(t *testing.T) {
	for _, tt := range []struct{ first, want string }{
		{"\x4a\x00\x00\x00\x0a5.5.5-10.11.19-MariaDB\x00rest", "a MySQL-protocol server (10.11.19-MariaDB)"},
		{"\x4a\x00\x00\x00\x0a8.0.36\x00rest", "a MySQL-protocol server (8.0.36)"},
		{"\x4a\x00\x00\x01\x0a8.0.36\x00rest", ""}, // sequence 1
		{"\x4a\x00\x00\x00\x098.0.36\x00rest", ""}, // protocol 9
		{"\x4a\x00\x00\x00\x0a8.0.36", ""},         // no NUL
		{"\x00\xffjunk", ""},
	} {
		if got := sniffGreeting([]byte(tt.first)); got != tt.want {
			t.Errorf("sniffGreeting(%q) = %q, want %q", tt.first, got, tt.want)
		}
	}
}
