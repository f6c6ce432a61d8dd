// Benthos with its I/O and processing components, as a peer that `sluice bench` measures beside
// Sluice (samples/bench/peers.yaml runs it with echo.yaml). Built by scripts/peers.
package main

import (
	"context"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
	"github.com/redpanda-data/benthos/v4/public/service"
)

func main() {
	service.RunCLI(context.Background())
}
