package tile

// activationNames are the activation types' names (test-backend-ops'
// type_b): index 0 is f32 (HalfB false), 1 is f16 (HalfB true).
var activationNames = []string{"f32", "f16"}

// ActivationName returns the activation type's name: f16 when halfB, else
// f32.
func ActivationName(halfB bool) string {
	if halfB {
		return activationNames[1]
	}
	return activationNames[0]
}

// ParseActivation maps f32 or f16 to halfB (false or true).
func ParseActivation(s string) (halfB bool, err error) {
	i, err := parseEnum(activationNames, "activation type", s)
	return i == 1, err
}
