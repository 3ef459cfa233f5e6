// Package plots draws ctxsim's figures with gonum/plot from plain series.
package plots
