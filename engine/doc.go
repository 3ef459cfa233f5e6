// Package engine is the structured-context region engine: it loads and
// validates agent blueprints (agent.leviath TOML), resolves region budgets
// against a model window, accepts writes into regions of the nine kinds,
// routes tool results, runs the context tools, evicts and compacts by kind,
// and assembles the request an agent would send.
//
// Behaviour follows the seed documents, then the reference runtime as read in
// spec/ENGINE.md, with the decisions D1–D11 listed there. The engine knows
// nothing of the simulator.
package engine
