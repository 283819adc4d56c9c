from coworkenv.cli import main

main()
