package sortlist

import (
	"os"
	"testing"

	"github.com/mdap-go/mdap/internal/statetest"
)

// TestMain gives the tests a state folder of their own (journal keys and
// chain heads), never the user's.
func TestMain(m *testing.M) { os.Exit(statetest.Main(m)) }
