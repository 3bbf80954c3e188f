// Redpanda Connect with only the components ferry's side-by-side benchmark uses:
// kafka_franz input and output, the http processor, and the pure processors and
// Bloblang functions that turn a batch into one gateway envelope and the answer
// back into one result per command. Built by tools/bench/build-redpanda-connect.sh.
package main

import (
	"context"

	"github.com/redpanda-data/benthos/v4/public/service"

	// http processor and http_client (and the other io components of the core).
	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	// bloblang, mapping, archive/unarchive, branch, switch, log...
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	// kafka_franz input and output.
	_ "github.com/redpanda-data/connect/v4/public/components/kafka"
)

// Set by the build script (-X main.version=...): the connect module version and the
// benthos core it requires, so `--version` tells which peer was measured.
var version = "dev"

func main() {
	service.RunCLI(context.Background(),
		service.CLIOptSetVersion(version, ""),
		service.CLIOptSetBinaryName("redpanda-connect"),
		service.CLIOptSetProductName("Redpanda Connect (ferry bench build)"),
	)
}
