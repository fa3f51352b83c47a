import sys

try:
    from .cli import main
except KeyboardInterrupt:  # Ctrl-C while the command line is still loading
    sys.stderr.write("ssdlab: interrupted\n")
    sys.exit(130)

main()
