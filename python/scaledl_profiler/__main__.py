from scaledl_profiler.cli import main

raise SystemExit(main())
