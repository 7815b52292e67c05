// @guppy/core/skills: the skills a thread sees, found in its scopes.
export { type LoadedSkills, loadSkills, type Skill } from "./load-skills.js";
