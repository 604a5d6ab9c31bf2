package calibrate

import "testing"

// TestDefaultConfigIsTheZeroConfigsOwn: the settings maker calibrate
// shows as its flags' defaults are what a zero Config reads as.
func TestDefaultConfigIsTheZeroConfigsOwn(t *testing.T) {
	got, err := Config{Seed: 1}.settings()
	if err != nil {
		t.Fatal(err)
	}
	if d := DefaultConfig(); got.StepsSampled != d.StepsSampled || got.Samples != d.Samples || got.Seed != d.Seed || got.Target != d.Target ||
		got.Confidence != d.Confidence || got.Parallel != d.Parallel || got.MaxSamples != d.MaxSamples {
		t.Errorf("a zero Config reads as %+v, DefaultConfig() is %+v", got, d)
	}
}
