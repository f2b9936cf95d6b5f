"""The outside tools the richer sources run (helm, kustomize, kubectl): found and their versions
read (find), kept from the network (no_network, sandbox, through a helper process: tool_helper,
tool_helper_main), bounded in time, memory and output (render_limits), their output kept between
scans (render_cache)."""
