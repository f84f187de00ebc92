// `mmsim replay RECORDING [options]`: a recording of matchmakerd's traffic
// run again through the engines under another configuration
// (docs/simulation.md, "Replay").
#pragma once

namespace mm::sim {

// argv[0] is "replay". Returns the process's exit code: 0, 2 for a usage
// error or a refused recording, 1 for anything else.
int run_replay(int argc, char** argv);

}  // namespace mm::sim
