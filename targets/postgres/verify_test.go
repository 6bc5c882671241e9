package postgres

import (
	"testing"

	"github.com/dbsock/dbsock/drivers"
)

// TestVerified: the transport follows inet_client_addr() and pg_stat_ssl,
// and a TLS session's version reads as Go names it.
func TestVerified(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := []struct {
		addr            *string
		ssl             bool
		version, cipher *string
		want            drivers.Transport
		wantVersion     string
	}{
		{s("127.0.0.1/32"), false, nil, nil, drivers.TCP, ""},
		{s("127.0.0.1/32"), true, s("TLSv1.3"), s("TLS_AES_256_GCM_SHA384"), drivers.TLS, "TLS 1.3"},
		{s("::1/128"), false, nil, nil, drivers.TCP6, ""},
		{nil, false, nil, nil, drivers.Unix, ""},
	}
	for _, tt := range tests {
		v := Verified(tt.addr, tt.ssl, tt.version, tt.cipher, drivers.Negotiated{})
		if v.Transport != tt.want || v.Negotiated.TLSVersion != tt.wantVersion {
			t.Errorf("addr %v ssl %v: %s %q (%s), want %s %q", deref(tt.addr), tt.ssl, v.Transport, v.Negotiated.TLSVersion, v.Evidence, tt.want, tt.wantVersion)
		}
	}
}
