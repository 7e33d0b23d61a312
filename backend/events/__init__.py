"""Events: one record per change that matters (an outbox row written in the change's own
transaction), delivered to the endpoints whose rules match it through one channel per kind
(email, signed webhook, AMQP topic exchange), each endpoint in a lane of its own."""
