package cluster

import (
	"reflect"
	"strings"
	"testing"
)

// TestFlagHelpNamesTheConstants: the flag help in the tags of ClientCreds.Path
// and CoordinatorConfig.MinWorkers, literal strings, says the environment
// variables, the default folder and the voters' period the package uses.
func TestFlagHelpNamesTheConstants(t *testing.T) {
	usage := func(v any, field string) string {
		f, ok := reflect.TypeOf(v).FieldByName(field)
		if !ok {
			t.Fatalf("%T has no field %s", v, field)
		}
		return f.Tag.Get("usage")
	}
	creds := usage(ClientCreds{}, "Path")
	for _, want := range []string{"$" + CredsEnv, "./" + DefaultCredsDir + " ", "$" + TokenEnv} {
		if !strings.Contains(creds, want) {
			t.Errorf("ClientCreds.Path's help %q does not say %q", creds, want)
		}
	}
	if u := usage(CoordinatorConfig{}, "MinWorkers"); !strings.Contains(u, "every "+VotersEvery.String()) {
		t.Errorf("CoordinatorConfig.MinWorkers's help %q does not say every %s", u, VotersEvery)
	}
}

// TestDefaultStockClusterIsTheZeroValuesDefaults: the defaults written
// out validate, and read as the zero configuration does.
func TestDefaultStockClusterIsTheZeroValuesDefaults(t *testing.T) {
	d := DefaultStockCluster()
	if d != (StockClusterConfig{Nodes: 3, BasePort: 4222, Workers: 3, Name: "mdap"}) || d.Validate() != nil || d != (StockClusterConfig{}).withDefaults() {
		t.Errorf("DefaultStockCluster() = %+v (Validate: %v)", d, d.Validate())
	}
}
