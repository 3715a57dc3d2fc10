"""What the services share: settings, contracts, adapters, identity, observability."""
