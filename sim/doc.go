// Package sim is ctxsim's discrete-event core: a virtual clock and event
// queue, the agent loop that replays a canonical trace through one context
// policy, model profiles, provider prompt-cache models and the meters whose
// definitions every report shares.
package sim
