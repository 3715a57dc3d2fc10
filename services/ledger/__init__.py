"""The ledger: account points and spare jokers, shared with the platform's other modes."""
