import sys

try:
    from scaledl_profiler.cli import main
except KeyboardInterrupt:  # Ctrl-C while the modules load: the same one line as later on
    print("interrupted", file=sys.stderr)
    raise SystemExit(130) from None

raise SystemExit(main())
