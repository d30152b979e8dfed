-- Argo CD health check for operator.ptah.run/v1alpha1 PtahMigration (docs/integrations/argocd/README.md).
-- Reads status.phase as the manager records it; Ready and observedGeneration tell a periodic
-- re-check of a converged generation apart from work on a new one. Written for Argo CD's Lua 5.1.
local hs = {}

local function condition(status, kind)
  for _, c in ipairs(status.conditions or {}) do
    if c.type == kind then
      return c
    end
  end
  return nil
end

-- "Reason: message" of a condition; the fallback when a manager older than the condition wrote it.
local function explain(c, fallback)
  if c == nil then
    return fallback
  end
  return c.reason .. ": " .. (c.message or "")
end

local status = obj.status
if status == nil then
  hs.status = "Progressing"
  hs.message = "waiting for the manager to record a status"
  return hs
end

local generation = obj.metadata.generation
if generation ~= nil and (status.observedGeneration == nil or status.observedGeneration < generation) then
  hs.status = "Progressing"
  hs.message = "the manager has not taken up generation " .. tostring(generation) .. " yet"
  return hs
end

local phase = status.phase
local ready = condition(status, "Ready")
if phase == "InSync" then
  hs.status = "Healthy"
  hs.message = explain(ready, "no migration is pending")
  return hs
end
if phase == "AwaitingApproval" then
  hs.status = "Suspended"
  hs.message = explain(ready, "the plan waits for a PtahMigrationApproval")
  return hs
end
if phase == "Suspended" then
  hs.status = "Suspended"
  hs.message = "spec.suspend is true: no new Jobs are created"
  return hs
end
if phase == "Blocked" or phase == "Failed" then
  hs.status = "Degraded"
  hs.message = phase .. ": " .. explain(ready, "see the resource's conditions and Events")
  return hs
end
-- Mid-cycle (Resolving, Reading, Planning, ...) after this generation was already in sync: the
-- interval's re-reading of the history, not new work.
if ready ~= nil and ready.status == "True" and ready.observedGeneration == generation then
  hs.status = "Healthy"
  hs.message = "in sync; re-checking (" .. tostring(phase) .. ")"
  return hs
end
hs.status = "Progressing"
hs.message = tostring(phase or "Pending") .. ": " .. explain(condition(status, "Reconciling"), "work in progress")
return hs
