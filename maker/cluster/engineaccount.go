package cluster

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// ErrOldAuthBlock: the engine signed in with a role's key (a server with
// roles) but not to EngineAccount: the server's configuration is the
// authorization block an mdap before the accounts wrote, where JetStream
// and every worker and coordinator share one account, and a client's
// reply subject reaches JetStream's API (a coordinator could delete a
// stream). Provision and ServeAgent refuse such a server; the fix is the
// upgrade of docs/nats.md: stop the server, move its store to the
// engine's account (AdoptStockStore), write the accounts block (maker
// nats config, StockAuthConfig) in place of the authorization block,
// start it. It wraps ErrAuth.
var ErrOldAuthBlock = fmt.Errorf("%w: the server keeps JetStream and its clients in one account", ErrAuth)

// userInfoSubject answers a connection with its user and account (every
// account imports it from the system account).
const userInfoSubject = "$SYS.REQ.USER.INFO"

// checkEngineAccount refuses with ErrOldAuthBlock a connection signed in
// with an nkey (a server with roles: the admin's credential) to an
// account other than EngineAccount. A server without roles (no
// credential, a token, a user name: trusted local use, NATS's global
// account) is not asked. Cost: one request to the server. Errors wrap
// ErrOldAuthBlock, or ErrEngine (the server did not answer).
func checkEngineAccount(ctx context.Context, nc *nats.Conn) error {
	if !nkeys.IsValidPublicUserKey(nc.Opts.Nkey) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, agentTimeout)
	defer cancel()
	msg, err := nc.RequestWithContext(ctx, userInfoSubject, nil)
	if err != nil {
		return fmt.Errorf("%w: ask the server which account the engine signed in to (%s): %w", ErrEngine, userInfoSubject, err)
	}
	var resp struct {
		Data  *server.UserInfo `json:"data"`
		Error *server.ApiError `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil || resp.Data == nil {
		return fmt.Errorf("%w: the server's answer to %s: %q", ErrEngine, userInfoSubject, msg.Data)
	}
	if resp.Data.Account == EngineAccount {
		return nil
	}
	return fmt.Errorf("%w: the admin %s signed in to account %q, not %s: the server's configuration is an authorization block an mdap before the accounts wrote, where a worker's or coordinator's reply subject reaches JetStream's API; stop the server, move its streams to the engine's account (cluster.AdoptStockStore on its store_dir), write the accounts block of maker nats config (cluster.StockAuthConfig) in place of the authorization block, and start it (docs/nats.md, upgrading)",
		ErrOldAuthBlock, nc.Opts.Nkey, resp.Data.Account, EngineAccount)
}
