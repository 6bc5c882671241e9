package redis

import "testing"

// TestIsHello: go-redis's HELLO, in any case, and nothing else.
func TestIsHello(t *testing.T) {
	for b, want := range map[string]bool{
		"*2\r\n$5\r\nhello\r\n$1\r\n2\r\n":                                            true,
		"*5\r\n$5\r\nHELLO\r\n$1\r\n3\r\n$4\r\nAUTH\r\n$7\r\ndefault\r\n$2\r\npw\r\n": true,
		"*1\r\n$5\r\nhello\r\n":                                                       true,
		"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n":                                              false,
		"*2\r\n$5\r\nhello\r\n$1\r\n2\r\n*1\r\n$4\r\nPING\r\n":                        false, // more after it
		"*2\r\n$5\r\nhelloX\r\n":                                                      false,
		"hello\r\n":                                                                   false,
		"":                                                                            false,
	} {
		if got := IsHello([]byte(b)); got != want {
			t.Errorf("IsHello(%q) = %v, want %v", b, got, want)
		}
	}
}
