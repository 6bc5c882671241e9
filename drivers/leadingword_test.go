package drivers

import (
	"errors"
	"testing"
)

func TestLeadingWord(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT 1":                       "SELECT",
		"  (SELECT id FROM t) UNION ALL": "SELECT",
		"/* why */ select 1":             "SELECT",
		"-- note\n  WITH x AS (SELECT 1) SELECT * FROM x": "WITH",
		"DELETE FROM t RETURNING id":                      "DELETE",
		"/* unclosed":                                     "",
		"":                                                "",
	} {
		if got := LeadingWord(q); got != want {
			t.Errorf("LeadingWord(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestCheckSQLTakesReadsWithCommentsAndParentheses(t *testing.T) {
	for _, q := range []string{"(SELECT n FROM t WHERE id = ?)", "/* c */ SELECT n FROM t WHERE id = ?"} {
		if err := CheckSQL("mysql", q, OpRead, "?"); err != nil {
			t.Errorf("CheckSQL(%q): %v", q, err)
		}
	}
	if err := CheckSQL("mysql", "/* SELECT */ DELETE FROM t WHERE id = ?", OpRead, "?"); err == nil {
		t.Error("a DELETE behind a comment that says SELECT passed as a read")
	}
	for q, ok := range map[string]bool{"SELECT id FROM t": true, "VALUES (1)": true, "DROP TABLE t": false, "DELETE FROM t RETURNING id": false} {
		err := CheckKeysSQL("postgres", q)
		if (err == nil) != ok || (err != nil && !errors.Is(err, ErrStatement)) {
			t.Errorf("CheckKeysSQL(%q) = %v", q, err)
		}
	}
}
