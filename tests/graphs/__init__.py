"""Graph workflows written once and run on google-adk 2.13 and on adk-temporal."""
