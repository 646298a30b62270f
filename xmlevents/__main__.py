from xmlevents._cli import entry

entry()
