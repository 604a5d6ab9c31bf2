package cluster

import "testing"

// TestDefaultsAreTheZeroConfigsOwn: the settings maker nats shows as its
// flags' defaults (DefaultEngine, DefaultProvision) are what a zero
// ProvisionConfig reads as, and are accepted.
func TestDefaultsAreTheZeroConfigsOwn(t *testing.T) {
	d, zero := DefaultProvision(), ProvisionConfig{}
	if d.maxRoutes() != zero.maxRoutes() || d.jobBytes() != zero.jobBytes() || d.maxDrawers() != zero.maxDrawers() ||
		d.replyBytes() != zero.replyBytes() || d.drawerEvery() != zero.drawerEvery() || d.routeQuota() != zero.routeQuota() ||
		d.drawerQuota() != zero.drawerQuota() || d.replyBound() != zero.replyBound() || d.keyBound() != zero.keyBound() {
		t.Errorf("DefaultProvision() = %+v reads otherwise than the zero ProvisionConfig", d)
	}
	if err := d.Validate(); err != nil {
		t.Errorf("DefaultProvision(): %v", err)
	}
	if err := DefaultEngine().Validate(); err != nil {
		t.Errorf("DefaultEngine(): %v", err)
	}
}
