package flagbind

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

type kind string

type inner struct {
	Token string `flag:"token" usage:"the token"`
}

type config struct {
	inner
	Name    string            `flag:"name" usage:"the \"name\""`
	Kind    kind              `flag:"kind" usage:"a kind"`
	On      bool              `flag:"on" usage:"on"`
	N       int               `flag:"n" usage:"n"`
	N32     int32             `flag:"n32" usage:"n32"`
	N64     int64             `flag:"n64" usage:"n64"`
	Seed    uint64            `flag:"seed" usage:"seed"`
	P       float64           `flag:"p" usage:"p"`
	Wait    time.Duration     `flag:"wait" usage:"wait"`
	Models  []string          `flag:"model" usage:"model"`
	K       map[string]int    `flag:"k" usage:"k"`
	Prices  map[string]string `flag:"price" usage:"price"`
	Nested  inner             // not embedded: bound by its own Bind
	Untaged int
	private int `flag:"private"`
}

// TestBindSetsTheFieldsAndNamesTheirFlags binds every kind of field,
// parses a command line and reads the fields back; defaults are the
// fields' values at Bind.
func TestBindSetsTheFieldsAndNamesTheirFlags(t *testing.T) {
	c := config{Kind: "auto", N: 7, Models: []string{"sim"}}
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	names := Bind(fs, &c)
	want := map[string]string{"Token": "token", "Name": "name", "Kind": "kind", "On": "on", "N": "n", "N32": "n32", "N64": "n64",
		"Seed": "seed", "P": "p", "Wait": "wait", "Models": "model", "K": "k", "Prices": "price"}
	if !maps.Equal(names, want) {
		t.Fatalf("names = %v, want %v", names, want)
	}
	if fl := fs.Lookup("kind"); fl.DefValue != "auto" || fl.Usage != "a kind" {
		t.Errorf("--kind: default %q usage %q, want auto and the tag's", fl.DefValue, fl.Usage)
	}
	if fl := fs.Lookup("name"); fl.Usage != `the "name"` {
		t.Errorf("--name usage %q", fl.Usage)
	}
	if fs.Lookup("n").DefValue != "7" || fs.Lookup("model").DefValue != "[sim]" {
		t.Errorf("defaults: --n %s, --model %s", fs.Lookup("n").DefValue, fs.Lookup("model").DefValue)
	}
	err := fs.Parse([]string{"--token=t", "--name=a,b", "--kind=native", "--on", "--n=1", "--n32=2", "--n64=3", "--seed=4", "--p=0.5",
		"--wait=2s", "--model=a,b", "--model=c", "--k=x=1,y=2", "--price=all=1/2"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Token != "t" || c.Name != "a,b" || c.Kind != "native" || !c.On || c.N != 1 || c.N32 != 2 || c.N64 != 3 || c.Seed != 4 || c.P != 0.5 ||
		c.Wait != 2*time.Second || len(c.Models) != 2 || c.Models[0] != "a,b" || c.K["y"] != 2 || c.Prices["all"] != "1/2" {
		t.Errorf("parsed %+v", c)
	}
	if fs.Lookup("private") != nil || c.private != 0 || c.Nested.Token != "" {
		t.Error("an unexported or nested field was bound")
	}
}

// level is a field type of its own syntax: a number, or "max".
type level struct{ n int }

func (l *level) String() string {
	if l.n < 0 {
		return "max"
	}
	return strconv.Itoa(l.n)
}

func (l *level) Set(s string) (err error) {
	if s == "max" {
		l.n = -1
		return nil
	}
	l.n, err = strconv.Atoi(s)
	return err
}

func (l *level) Type() string { return "level" }

// TestBindBindsAFlagValue: a field whose pointer is a pflag.Value is
// bound as itself, its default its String at Bind.
func TestBindBindsAFlagValue(t *testing.T) {
	c := struct {
		L level `flag:"level" usage:"a level"`
	}{level{3}}
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	Bind(fs, &c)
	if fl := fs.Lookup("level"); fl.DefValue != "3" || fl.Value.Type() != "level" {
		t.Fatalf("--level: default %q, type %q", fl.DefValue, fl.Value.Type())
	}
	if err := fs.Parse([]string{"--level=max"}); err != nil || c.L.n != -1 {
		t.Errorf("--level=max: %v, %+v", err, c.L)
	}
	if err := fs.Parse([]string{"--level=x"}); err == nil {
		t.Error("--level=x: no error")
	}
}

func TestBindPanicsOnAFieldItCannotBind(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	Bind(pflag.NewFlagSet("x", pflag.ContinueOnError), &struct {
		C complex128 `flag:"c"`
	}{})
}

func TestNamesAreBindsWithoutFlags(t *testing.T) {
	c := config{}
	bound := Bind(pflag.NewFlagSet("x", pflag.ContinueOnError), &c)
	bound["Extra"] = "extra"
	if got := Names(map[string]string{"Extra": "extra", "Name": "other"}, config{}); !maps.Equal(got, bound) {
		t.Errorf("Names = %v, want %v", got, bound)
	}
}

type caps struct {
	MaxDepth int `flag:"max-depth" usage:"depth cap"`
}

type vote struct {
	MaxSamples int `flag:"max-samples" usage:"samples"`
	Ignored    int
}

type solver struct {
	MaxTokens int  `flag:"max-tokens" usage:"tokens"`
	Vote      vote `flags:"Vote."`
}

type settings struct {
	Caps   caps   `flags:"Caps."`
	Solver solver `flags:""` // named as solver's own Validate does
	Other  caps   // not a group: left alone
	Model  string `flag:"model" usage:"model: {specs}; {note} {\"json\": 1}"`
}

// TestBindBindsGroupsByTheirPath binds the fields of groups, to any depth,
// named by their prefix; Names gives the same names; an unmarked struct
// field is not bound.
func TestBindBindsGroupsByTheirPath(t *testing.T) {
	s := settings{Caps: caps{MaxDepth: 3}}
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	names := Usage{"specs": "sim, openai:MODEL", "note": "N"}.Bind(fs, &s)
	want := map[string]string{"Caps.MaxDepth": "max-depth", "MaxTokens": "max-tokens", "Vote.MaxSamples": "max-samples", "Model": "model"}
	if !maps.Equal(names, want) {
		t.Fatalf("names = %v, want %v", names, want)
	}
	if got := Names(nil, settings{}); !maps.Equal(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
	if fl := fs.Lookup("max-depth"); fl == nil || fl.DefValue != "3" {
		t.Fatalf("--max-depth: %v", fl)
	}
	if err := fs.Parse([]string{"--max-depth=5", "--max-tokens=7", "--max-samples=9"}); err != nil {
		t.Fatal(err)
	}
	if s.Caps.MaxDepth != 5 || s.Solver.MaxTokens != 7 || s.Solver.Vote.MaxSamples != 9 || s.Other.MaxDepth != 0 {
		t.Errorf("parsed %+v", s)
	}
	if got := fs.Lookup("model").Usage; got != `model: sim, openai:MODEL; N {"json": 1}` {
		t.Errorf("--model usage %q", got)
	}
}

// TestBindPanicsOnAPartUsageLacks: a {KEY} left in a help text is a
// programming error, with Usage or without (Bind).
func TestBindPanicsOnAPartUsageLacks(t *testing.T) {
	for name, u := range map[string]Usage{"{specs}": nil, "{note}": {"specs": "x"}} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "--model") || !strings.Contains(fmt.Sprint(r), name) {
					t.Errorf("recovered %v, want a panic naming --model and %s", r, name)
				}
			}()
			u.Bind(pflag.NewFlagSet("x", pflag.ContinueOnError), &settings{})
		})
	}
}
