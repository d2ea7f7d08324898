package httpapi_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/memfs/memfs/httpapi"
	"github.com/memfs/memfs/versions"
)

// Every code the engine returns for a caller's mistake maps to a 4xx; only
// what the engine could not classify is a 500.
func TestEveryCodeHasAStatus(t *testing.T) {
	for c := versions.CodeInvalid; c <= versions.CodeStale; c++ {
		status, body := httpapi.NewBody(&versions.Error{Code: c, Message: "m"})
		if status < 400 || status >= 500 {
			t.Errorf("code %d: status %d, want a 4xx", c, status)
		}
		if body.Type != "error" || body.Error.Type == httpapi.TypeAPI || body.Error.Message == "" {
			t.Errorf("code %d: body %+v", c, body)
		}
	}
	status, body := httpapi.NewBody(errors.New("disk on fire"))
	if status != http.StatusInternalServerError || body.Error.Type != httpapi.TypeAPI {
		t.Errorf("an unclassified error: %d %+v", status, body)
	}
	if body.Error.Message == "disk on fire" {
		t.Error("an internal error's text reached the client")
	}
}
