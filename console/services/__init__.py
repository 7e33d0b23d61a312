"""The console's services, one module per section."""
