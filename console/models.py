"""The console's own records (bulk jobs); everything else it reads from the apps below it."""
